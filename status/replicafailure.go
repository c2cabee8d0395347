package status

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reasons of the ReplicaFailure condition, set from the sign of
// activeReplicas - spec.replicas when manageReplicas failed.
const (
	// ReasonFailedCreate: there were too few pods, so creating them failed.
	ReasonFailedCreate = "FailedCreate"
	// ReasonFailedDelete: there were too many pods, so deleting them failed.
	ReasonFailedDelete = "FailedDelete"
)

// defaultReplicas is what the API server fills into a nil spec.replicas.
const defaultReplicas int32 = 1

// desiredReplicas reads spec.replicas, taking nil as the API default of 1.
// Objects from the API server always carry the field; a nil one comes from
// hand-built objects, where upstream would panic.
func desiredReplicas(replicas *int32) int32 {
	if replicas == nil {
		return defaultReplicas
	}
	return *replicas
}

// failureReason names the direction manageReplicas was moving in. An error
// with the count already right (diff 0) gets an empty reason, as upstream.
func failureReason(active, desired int32) string {
	switch diff := int64(active) - int64(desired); {
	case diff < 0:
		return ReasonFailedCreate
	case diff > 0:
		return ReasonFailedDelete
	}
	return ""
}

// reconcileReplicaFailure applies the ReplicaFailure rules to conds:
//   - an error and no failure condition: add one (status True, reason by
//     direction, message from the error, transition time now);
//   - no error and a failure condition: remove it;
//   - otherwise conds is returned unchanged. In particular a failure that keeps
//     failing keeps its first condition, reason and message included, so the
//     transition time says when the trouble started.
func reconcileReplicaFailure[K condKind[C, T], C comparable, T ~string](conds []C, failureType T, active, desired int32, manageErr error, now time.Time) []C {
	exists := conditionIndex[K](conds, failureType) >= 0
	switch {
	case manageErr != nil && !exists:
		var k K
		cond := k.newCondition(failureType, v1.ConditionTrue, failureReason(active, desired), manageErr.Error(), metav1.NewTime(now))
		return setCondition[K](conds, cond)
	case manageErr == nil && exists:
		return removeCondition[K](conds, failureType)
	}
	return conds
}
