package podranking

import (
	"errors"
	"fmt"
	"math"
)

// DeletionCostAnnotation is the pod annotation through which users hint which
// pods to delete first on scale-down (KEP-2255): lower cost goes first.
const DeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// ErrInvalidDeletionCost is wrapped by every error DeletionCost returns.
var ErrInvalidDeletionCost = errors.New("invalid pod deletion cost")

// DeletionCost parses the deletion-cost annotation the way the API server and
// the ReplicaSet controller do. A missing annotation is (0, nil). A present
// value must start with '-', be exactly "0", or start with a digit 1-9, so
// "", "+10", "008" and " 5" are rejected; it must then be a base-10 int32 with
// nothing trailing. Note that the first-character rule lets "-0" (0) and
// "-08" (-8) through, as upstream does. Every invalid value returns 0 and an
// error wrapping ErrInvalidDeletionCost; the ranking treats it as 0.
func DeletionCost(annotations map[string]string) (int32, error) {
	v, ok := annotations[DeletionCostAnnotation]
	if !ok {
		return 0, nil
	}
	c, ok := parseCost(v)
	if !ok {
		return 0, fmt.Errorf("%w: %q is not a 32-bit integer without a plus sign or leading zeros", ErrInvalidDeletionCost, v)
	}
	return c, nil
}

// parseCost is the allocation-free core of DeletionCost. Key extraction calls
// it once per pod, and strconv would allocate an error for every invalid
// value, which users can put on any number of pods.
func parseCost(s string) (int32, bool) {
	if s == "" {
		return 0, false
	}
	if s == "0" {
		return 0, true
	}
	neg := false
	digits := s
	switch {
	case s[0] == '-':
		neg = true
		digits = s[1:]
	case s[0] >= '1' && s[0] <= '9':
	default:
		return 0, false
	}
	if digits == "" {
		return 0, false
	}
	// Accumulate as a positive magnitude bounded by 2^31, which fits int64
	// with room to spare, so overflow is a plain comparison.
	var n int64
	for i := 0; i < len(digits); i++ {
		d := digits[i]
		if d < '0' || d > '9' {
			return 0, false
		}
		n = n*10 + int64(d-'0')
		if n > math.MaxInt32+1 {
			return 0, false
		}
	}
	if neg {
		return int32(-n), true
	}
	if n > math.MaxInt32 {
		return 0, false
	}
	return int32(n), true
}
