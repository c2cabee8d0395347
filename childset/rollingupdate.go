package childset

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// ErrInvalidRollingUpdate is wrapped by every error RollingUpdate.Bounds
// returns: the configuration is bad data, and retrying cannot fix it.
var ErrInvalidRollingUpdate = errors.New("invalid rolling update")

// DefaultMaxSurge and DefaultMaxUnavailable are what a nil MaxSurge or
// MaxUnavailable means: apps/v1 Deployment's defaults.
var (
	DefaultMaxSurge       = intstr.FromString("25%")
	DefaultMaxUnavailable = intstr.FromString("25%")
)

// RollingUpdate configures how an owner's children move to a new revision.
//
// It holds no MinReadySeconds: availability is a property of a child,
// which the Kind decides (for pods, podstate.IsAvailable with the owner's
// minReadySeconds), and status counts it even when nothing rolls out.
type RollingUpdate struct {
	// MaxSurge is how many children may exist beyond the wanted number
	// during an update: an absolute number or a percentage of the wanted
	// number, rounded up. Nil means DefaultMaxSurge. It may exceed 100%.
	MaxSurge *intstr.IntOrString
	// MaxUnavailable is how many of the wanted children may be unavailable
	// during an update: an absolute number or a percentage of the wanted
	// number, rounded down, at most 100%. Nil means DefaultMaxUnavailable.
	// MaxSurge and MaxUnavailable may not both be given as zero.
	MaxUnavailable *intstr.IntOrString
	// Partition is how many children stay at the current revision, those
	// of the lowest indices in indexed mode; 0 updates them all. It may
	// not be negative.
	Partition int32
}

// RolloutBounds are a RollingUpdate's bounds resolved against a wanted
// number of children.
type RolloutBounds struct {
	// MaxSurge: the children, counting those being deleted, never exceed
	// the wanted number plus MaxSurge.
	MaxSurge int32
	// MaxUnavailable: the available children never fall below the wanted
	// number minus MaxUnavailable. Never above the wanted number.
	MaxUnavailable int32
}

// Bounds resolves u against replicas wanted children exactly as an apps/v1
// Deployment's controller resolves its strategy (after the API server's
// defaulting and validation): maxSurge rounds up, maxUnavailable rounds
// down; when both resolve to zero maxUnavailable becomes 1, so the update
// can progress even where surging is refused by a quota; maxUnavailable
// never exceeds replicas, so it is 0 when replicas is 0. Replicas below zero
// count as zero.
//
// What the API server would refuse for a Deployment is an error wrapping
// ErrInvalidRollingUpdate: a negative number, a string that is not digits
// followed by '%', a maxUnavailable above 100%, both given as zero (0 or
// 0%), and a negative partition. A maxSurge resolving beyond the int32
// range is an error too, where Deployment's arithmetic wraps around.
func (u RollingUpdate) Bounds(replicas int32) (RolloutBounds, error) {
	if u.Partition < 0 {
		return RolloutBounds{}, fmt.Errorf("%w: partition %d: must not be negative", ErrInvalidRollingUpdate, u.Partition)
	}
	surge, err := parseFencepost("maxSurge", u.MaxSurge, DefaultMaxSurge)
	if err != nil {
		return RolloutBounds{}, err
	}
	unavailable, err := parseFencepost("maxUnavailable", u.MaxUnavailable, DefaultMaxUnavailable)
	if err != nil {
		return RolloutBounds{}, err
	}
	if unavailable.percent && unavailable.value > 100 {
		return RolloutBounds{}, fmt.Errorf("%w: maxUnavailable %q: must not be greater than 100%%", ErrInvalidRollingUpdate, unavailable.text)
	}
	if surge.value == 0 && unavailable.value == 0 {
		return RolloutBounds{}, fmt.Errorf("%w: maxSurge and maxUnavailable may not both be 0", ErrInvalidRollingUpdate)
	}
	total := max(int64(replicas), 0)
	b := RolloutBounds{MaxUnavailable: int32(unavailable.scale(total, false))}
	s := surge.scale(total, true)
	if s > math.MaxInt32 {
		return RolloutBounds{}, fmt.Errorf("%w: maxSurge %q of %d replicas is more than %d children", ErrInvalidRollingUpdate, surge.text, total, math.MaxInt32)
	}
	b.MaxSurge = int32(s)
	if b.MaxSurge == 0 && b.MaxUnavailable == 0 {
		b.MaxUnavailable = 1
	}
	b.MaxUnavailable = int32(min(int64(b.MaxUnavailable), total))
	return b, nil
}

// fencepost is a validated maxSurge or maxUnavailable: a non-negative
// number, or a percentage when percent is set.
type fencepost struct {
	value   int64
	percent bool
	text    string // as the user wrote it, for messages
}

// parseFencepost validates v (def when nil) as the API server validates a
// Deployment's fencepost.
func parseFencepost(field string, v *intstr.IntOrString, def intstr.IntOrString) (fencepost, error) {
	if v == nil {
		v = &def
	}
	switch v.Type {
	case intstr.Int:
		if v.IntVal < 0 {
			return fencepost{}, fmt.Errorf("%w: %s %d: must not be negative", ErrInvalidRollingUpdate, field, v.IntVal)
		}
		return fencepost{value: int64(v.IntVal), text: strconv.Itoa(int(v.IntVal))}, nil
	case intstr.String:
		digits, ok := strings.CutSuffix(v.StrVal, "%")
		if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
			return fencepost{}, fmt.Errorf("%w: %s %q: must be a number or digits followed by '%%' (such as 25%%)", ErrInvalidRollingUpdate, field, v.StrVal)
		}
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil {
			return fencepost{}, fmt.Errorf("%w: %s %q: %w", ErrInvalidRollingUpdate, field, v.StrVal, err)
		}
		return fencepost{value: n, percent: true, text: v.StrVal}, nil
	default:
		return fencepost{}, fmt.Errorf("%w: %s: type %d is neither a number nor a string", ErrInvalidRollingUpdate, field, v.Type)
	}
}

// scale resolves f against total (≥ 0) children. A percentage is rounded
// up or down; a result beyond the int32 range is returned as
// math.MaxInt32+1, which only maxSurge can reach (maxUnavailable is at most
// 100%).
func (f fencepost) scale(total int64, roundUp bool) int64 {
	if !f.percent {
		return f.value
	}
	if total == 0 {
		return 0
	}
	// value*total must not overflow: past this, the result is out of range
	// anyway.
	if f.value > 100*math.MaxInt32/total {
		return math.MaxInt32 + 1
	}
	product := f.value * total
	if roundUp {
		return (product + 99) / 100
	}
	return product / 100
}
