package status

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
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

// CalculateReplicaSetStatus returns the status rs should have given its
// active and terminating pods and the outcome of the last manageReplicas.
//
// It starts from rs.Status, so observedGeneration and unrelated conditions
// carry over, then fills the counts (see CountReplicas, with the pod template
// labels and spec.minReadySeconds) and applies the ReplicaFailure rules:
//   - manageReplicasErr set and no ReplicaFailure condition: one is added,
//     status True, reason ReasonFailedCreate or ReasonFailedDelete by whether
//     there are fewer or more active pods than spec.replicas (empty when equal),
//     message manageReplicasErr.Error(), transition time now;
//   - manageReplicasErr nil: any ReplicaFailure condition is removed;
//   - an error while the condition exists leaves it exactly as it is, so its
//     transition time says when the trouble started.
//
// status.terminatingReplicas is set to the number of terminatingPods only
// with WithTerminatingReplicas(); otherwise it is nil. A nil spec.replicas
// counts as the API default of 1. WithReplicaCounts supplies counts made
// beforehand.
func CalculateReplicaSetStatus(rs *appsv1.ReplicaSet, activePods, terminatingPods []*v1.Pod, manageReplicasErr error, now time.Time, opts ...Option) appsv1.ReplicaSetStatus {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	st := rs.Status
	var c ReplicaCounts
	if o.counts != nil {
		c = *o.counts
	} else {
		c = CountReplicas(activePods, rs.Spec.Template.Labels, rs.Spec.MinReadySeconds, now)
	}
	st.Replicas, st.FullyLabeledReplicas, st.ReadyReplicas, st.AvailableReplicas = c.Replicas, c.FullyLabeledReplicas, c.ReadyReplicas, c.AvailableReplicas
	st.TerminatingReplicas = nil
	if o.terminatingReplicas {
		n := countPods(terminatingPods)
		st.TerminatingReplicas = &n
	}
	failing := GetCondition(rs.Status, appsv1.ReplicaSetReplicaFailure) != nil
	switch {
	case manageReplicasErr != nil && !failing:
		SetCondition(&st, appsv1.ReplicaSetCondition{Type: appsv1.ReplicaSetReplicaFailure, Status: v1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(now), Reason: failureReason(c.Replicas, rs.Spec.Replicas), Message: manageReplicasErr.Error()})
	case manageReplicasErr == nil && failing:
		RemoveCondition(&st, appsv1.ReplicaSetReplicaFailure)
	}
	return st
}

// CalculateReplicationControllerStatus is CalculateReplicaSetStatus for
// ReplicationControllers, whose status has no terminatingReplicas and whose
// failure condition is v1.ReplicationControllerReplicaFailure. A nil
// spec.template counts as a template without labels.
func CalculateReplicationControllerStatus(rc *v1.ReplicationController, activePods []*v1.Pod, manageReplicasErr error, now time.Time) v1.ReplicationControllerStatus {
	var templateLabels map[string]string
	if rc.Spec.Template != nil {
		templateLabels = rc.Spec.Template.Labels
	}
	st := rc.Status
	c := CountReplicas(activePods, templateLabels, rc.Spec.MinReadySeconds, now)
	st.Replicas, st.FullyLabeledReplicas, st.ReadyReplicas, st.AvailableReplicas = c.Replicas, c.FullyLabeledReplicas, c.ReadyReplicas, c.AvailableReplicas
	failing := GetReplicationControllerCondition(rc.Status, v1.ReplicationControllerReplicaFailure) != nil
	switch {
	case manageReplicasErr != nil && !failing:
		SetReplicationControllerCondition(&st, v1.ReplicationControllerCondition{Type: v1.ReplicationControllerReplicaFailure, Status: v1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(now), Reason: failureReason(c.Replicas, rc.Spec.Replicas), Message: manageReplicasErr.Error()})
	case manageReplicasErr == nil && failing:
		RemoveReplicationControllerCondition(&st, v1.ReplicationControllerReplicaFailure)
	}
	return st
}

// failureReason names the direction manageReplicas was moving in: creating
// when there are fewer active pods than desired, deleting when more, and
// nothing when the count is already right, as upstream. A nil spec.replicas
// counts as the API default of 1 (objects from an apiserver always carry
// it; hand-built ones may not).
func failureReason(active int32, specReplicas *int32) string {
	desired := int32(1)
	if specReplicas != nil {
		desired = *specReplicas
	}
	switch diff := int64(active) - int64(desired); {
	case diff < 0:
		return ReasonFailedCreate
	case diff > 0:
		return ReasonFailedDelete
	}
	return ""
}

// countPods counts the non-nil pods, matching CountReplicas' treatment of nil
// entries.
func countPods(pods []*v1.Pod) int32 {
	var n int32
	for _, p := range pods {
		if p != nil {
			n++
		}
	}
	return n
}
