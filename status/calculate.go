package status

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
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
//   - an error while the condition exists leaves it exactly as it is.
//
// status.terminatingReplicas is set to the number of terminatingPods only
// with WithTerminatingReplicas(); otherwise it is nil.
//
// A nil spec.replicas counts as the API default of 1. A nil rs gives the zero
// status; there is nothing to compute for it.
func CalculateReplicaSetStatus(rs *appsv1.ReplicaSet, activePods, terminatingPods []*v1.Pod, manageReplicasErr error, now time.Time, opts ...Option) appsv1.ReplicaSetStatus {
	if rs == nil {
		return appsv1.ReplicaSetStatus{}
	}
	o := buildOptions(opts)
	st := rs.Status
	c := CountReplicas(activePods, rs.Spec.Template.Labels, rs.Spec.MinReadySeconds, now)
	st.Replicas, st.FullyLabeledReplicas, st.ReadyReplicas, st.AvailableReplicas = c.Replicas, c.FullyLabeledReplicas, c.ReadyReplicas, c.AvailableReplicas
	st.TerminatingReplicas = nil
	if o.terminatingReplicas {
		n := countPods(terminatingPods)
		st.TerminatingReplicas = &n
	}
	st.Conditions = reconcileReplicaFailure[replicaSetKind](st.Conditions, appsv1.ReplicaSetReplicaFailure,
		c.Replicas, desiredReplicas(rs.Spec.Replicas), manageReplicasErr, now)
	return st
}

// CalculateReplicationControllerStatus is CalculateReplicaSetStatus for
// ReplicationControllers, whose status has no terminatingReplicas and whose
// failure condition is v1.ReplicationControllerReplicaFailure. A nil
// spec.template counts as a template without labels; a nil rc gives the zero
// status.
func CalculateReplicationControllerStatus(rc *v1.ReplicationController, activePods []*v1.Pod, manageReplicasErr error, now time.Time) v1.ReplicationControllerStatus {
	if rc == nil {
		return v1.ReplicationControllerStatus{}
	}
	var templateLabels map[string]string
	if rc.Spec.Template != nil {
		templateLabels = rc.Spec.Template.Labels
	}
	st := rc.Status
	c := CountReplicas(activePods, templateLabels, rc.Spec.MinReadySeconds, now)
	st.Replicas, st.FullyLabeledReplicas, st.ReadyReplicas, st.AvailableReplicas = c.Replicas, c.FullyLabeledReplicas, c.ReadyReplicas, c.AvailableReplicas
	st.Conditions = reconcileReplicaFailure[replicationControllerKind](st.Conditions, v1.ReplicationControllerReplicaFailure,
		c.Replicas, desiredReplicas(rc.Spec.Replicas), manageReplicasErr, now)
	return st
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
