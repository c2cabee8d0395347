package status

import (
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NewReplicaSetCondition returns a condition whose transition time is now.
func NewReplicaSetCondition(condType appsv1.ReplicaSetConditionType, status v1.ConditionStatus, reason, msg string) appsv1.ReplicaSetCondition {
	return appsv1.ReplicaSetCondition{Type: condType, Status: status, LastTransitionTime: metav1.Now(), Reason: reason, Message: msg}
}

// GetCondition returns a copy of the first condition of condType in status,
// or nil when there is none. Writing through the result leaves status alone.
func GetCondition(status appsv1.ReplicaSetStatus, condType appsv1.ReplicaSetConditionType) *appsv1.ReplicaSetCondition {
	for _, c := range status.Conditions {
		if c.Type == condType {
			return &c
		}
	}
	return nil
}

// SetCondition puts condition into status, replacing every condition of its
// type, and appends it last. When a condition of that type already has the
// same status and reason, status is left as it is: its transition time (and
// message) stay. The new list never shares memory with the old one, since
// statuses are copied by value all over controllers.
func SetCondition(status *appsv1.ReplicaSetStatus, condition appsv1.ReplicaSetCondition) {
	status.Conditions = setCondition(status.Conditions, condition, rsConditionState)
}

// RemoveCondition removes every condition of condType from status. When none
// is left, status.Conditions becomes nil, not an empty slice, as upstream
// (the steady-state check of an update tells nil from empty).
func RemoveCondition(status *appsv1.ReplicaSetStatus, condType appsv1.ReplicaSetConditionType) {
	status.Conditions = withoutType(status.Conditions, string(condType), rsConditionState)
}

func rsConditionState(c appsv1.ReplicaSetCondition) conditionState {
	return conditionState{string(c.Type), c.Status, c.Reason}
}

// NewReplicationControllerCondition returns a condition whose transition time
// is now.
func NewReplicationControllerCondition(condType v1.ReplicationControllerConditionType, status v1.ConditionStatus, reason, msg string) v1.ReplicationControllerCondition {
	return v1.ReplicationControllerCondition{Type: condType, Status: status, LastTransitionTime: metav1.Now(), Reason: reason, Message: msg}
}

// GetReplicationControllerCondition is GetCondition for ReplicationControllers.
func GetReplicationControllerCondition(status v1.ReplicationControllerStatus, condType v1.ReplicationControllerConditionType) *v1.ReplicationControllerCondition {
	for _, c := range status.Conditions {
		if c.Type == condType {
			return &c
		}
	}
	return nil
}

// SetReplicationControllerCondition is SetCondition for ReplicationControllers.
func SetReplicationControllerCondition(status *v1.ReplicationControllerStatus, condition v1.ReplicationControllerCondition) {
	status.Conditions = setCondition(status.Conditions, condition, rcConditionState)
}

// RemoveReplicationControllerCondition is RemoveCondition for
// ReplicationControllers.
func RemoveReplicationControllerCondition(status *v1.ReplicationControllerStatus, condType v1.ReplicationControllerConditionType) {
	status.Conditions = withoutType(status.Conditions, string(condType), rcConditionState)
}

func rcConditionState(c v1.ReplicationControllerCondition) conditionState {
	return conditionState{string(c.Type), c.Status, c.Reason}
}

// conditionState is what the condition helpers compare of a ReplicaSet or
// ReplicationController condition.
type conditionState struct {
	condType string
	status   v1.ConditionStatus
	reason   string
}

// setCondition returns conds with c in place of every condition of its type,
// appended last, or conds itself when the first condition of that type
// already has c's status and reason.
func setCondition[C any](conds []C, c C, state func(C) conditionState) []C {
	want := state(c)
	for _, old := range conds {
		if got := state(old); got.condType == want.condType {
			if got == want {
				return conds
			}
			break
		}
	}
	// withoutType builds a new slice, so the result never shares memory
	// with conds.
	return append(withoutType(conds, want.condType, state), c)
}

// withoutType returns the conditions of conds not of condType, in order, in
// a new slice; nil when none is left.
func withoutType[C any](conds []C, condType string, state func(C) conditionState) []C {
	var kept []C
	for _, c := range conds {
		if state(c).condType != condType {
			kept = append(kept, c)
		}
	}
	return kept
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
