package status

import (
	"reflect"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// condKind lets one implementation of the condition rules serve every
// workload kind. ReplicaSet and ReplicationController conditions have the
// same fields but distinct Go types (their Type fields are different named
// string types), so Go can neither convert between them nor reach their
// fields through a type parameter; a zero-size adapter type per kind supplies
// the few accessors the rules need instead.
type condKind[C comparable, T ~string] interface {
	condType(C) T
	condStatus(C) v1.ConditionStatus
	condReason(C) string
	newCondition(t T, status v1.ConditionStatus, reason, msg string, at metav1.Time) C
}

// conditionIndex returns the index of the first condition of type t, or -1.
// The first match is the one that counts, as upstream: duplicates can only
// come from another writer, and SetCondition clears them all.
func conditionIndex[K condKind[C, T], C comparable, T ~string](conds []C, t T) int {
	var k K
	for i := range conds {
		if k.condType(conds[i]) == t {
			return i
		}
	}
	return -1
}

// getCondition returns a copy of the first condition of type t, so the caller
// can't change the status behind the owner's back by writing through it.
func getCondition[K condKind[C, T], C comparable, T ~string](conds []C, t T) *C {
	i := conditionIndex[K](conds, t)
	if i < 0 {
		return nil
	}
	c := conds[i]
	return &c
}

// setCondition returns conds with cond in place of every condition of its
// type. A condition with the same status and reason is kept as it is, so its
// transition time keeps meaning "when this state began" (and its message is
// not refreshed, as upstream). The result never shares memory with conds when
// it differs from it: statuses are copied by value all over controllers, and
// an append into a shared backing array would leak into those copies.
func setCondition[K condKind[C, T], C comparable, T ~string](conds []C, cond C) []C {
	var k K
	t := k.condType(cond)
	if i := conditionIndex[K](conds, t); i >= 0 &&
		k.condStatus(conds[i]) == k.condStatus(cond) && k.condReason(conds[i]) == k.condReason(cond) {
		return conds
	}
	out := make([]C, 0, len(conds)+1)
	for _, c := range conds {
		if k.condType(c) != t {
			out = append(out, c)
		}
	}
	return append(out, cond)
}

// removeCondition returns conds without any condition of type t. When nothing
// is left the result is nil rather than an empty slice: upstream's rebuilt list
// starts nil, and the steady-state check of an update tells nil from empty.
func removeCondition[K condKind[C, T], C comparable, T ~string](conds []C, t T) []C {
	var k K
	drop := 0
	for _, c := range conds {
		if k.condType(c) == t {
			drop++
		}
	}
	if len(conds) == drop {
		return nil
	}
	if drop == 0 {
		// Nothing to remove: upstream rebuilds an equal list, keeping the
		// original saves the allocation.
		return conds
	}
	out := make([]C, 0, len(conds)-drop)
	for _, c := range conds {
		if k.condType(c) != t {
			out = append(out, c)
		}
	}
	return out
}

// conditionsEqual is reflect.DeepEqual for condition lists without reflection
// in the common case: nil and empty differ, elements compare with == first and
// fall back to DeepEqual only when == says no (two time.Location pointers with
// equal contents are deep-equal but not ==).
func conditionsEqual[C comparable](a, b []C) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}
