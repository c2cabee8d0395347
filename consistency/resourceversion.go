package consistency

import (
	"errors"
	"fmt"
)

// ErrMalformedResourceVersion is matched (errors.Is) by the error
// CompareResourceVersions returns for a version it cannot order.
var ErrMalformedResourceVersion = errors.New("consistency: resource version is not a decimal without leading zeros")

// CompareResourceVersions orders two resource versions written by the API
// server: -1 when a is older than b, 0 when equal, +1 when newer. A resource
// version is otherwise opaque; it can be ordered only when it has the form
// Kubernetes documents as comparable: a non-empty run of decimal digits
// without a leading zero. Anything else is an error wrapping
// ErrMalformedResourceVersion, and callers treat it as "cannot tell".
//
// The guard compares here rather than through apimachinery's
// pkg/util/resourceversion because that package arrived with Kubernetes 1.35:
// depending on it would lift every importer of ctrlkit to k8s.io/* v0.35.
// Versions can be longer than 64 bits, so they are compared as digit strings:
// the longer one is the larger, and equal lengths compare byte by byte.
func CompareResourceVersions(a, b string) (int, error) {
	if !wellFormedResourceVersion(a) {
		return 0, fmt.Errorf("%w: %q", ErrMalformedResourceVersion, a)
	}
	if !wellFormedResourceVersion(b) {
		return 0, fmt.Errorf("%w: %q", ErrMalformedResourceVersion, b)
	}
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1, nil
		}
		return 1, nil
	}
	switch {
	case a < b:
		return -1, nil
	case a > b:
		return 1, nil
	}
	return 0, nil
}

func wellFormedResourceVersion(rv string) bool {
	if rv == "" || rv[0] == '0' {
		return false
	}
	for i := 0; i < len(rv); i++ {
		if rv[i] < '0' || rv[i] > '9' {
			return false
		}
	}
	return true
}
