package status

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// replicationControllerKind adapts ReplicationControllers to the kind-neutral
// core. Their status has no terminatingReplicas, so the view leaves it nil.
type replicationControllerKind struct{}

func (replicationControllerKind) condType(c v1.ReplicationControllerCondition) v1.ReplicationControllerConditionType {
	return c.Type
}
func (replicationControllerKind) condStatus(c v1.ReplicationControllerCondition) v1.ConditionStatus {
	return c.Status
}
func (replicationControllerKind) condReason(c v1.ReplicationControllerCondition) string {
	return c.Reason
}
func (replicationControllerKind) newCondition(t v1.ReplicationControllerConditionType, s v1.ConditionStatus, reason, msg string, at metav1.Time) v1.ReplicationControllerCondition {
	return v1.ReplicationControllerCondition{Type: t, Status: s, LastTransitionTime: at, Reason: reason, Message: msg}
}

func (replicationControllerKind) kindName() string { return "ReplicationController" }
func (replicationControllerKind) statusOf(rc *v1.ReplicationController) *v1.ReplicationControllerStatus {
	return &rc.Status
}
func (replicationControllerKind) view(s *v1.ReplicationControllerStatus) statusView[v1.ReplicationControllerCondition] {
	return statusView[v1.ReplicationControllerCondition]{
		counts:             ReplicaCounts{s.Replicas, s.FullyLabeledReplicas, s.ReadyReplicas, s.AvailableReplicas},
		observedGeneration: s.ObservedGeneration,
		conditions:         s.Conditions,
	}
}
func (replicationControllerKind) setObservedGeneration(s *v1.ReplicationControllerStatus, g int64) {
	s.ObservedGeneration = g
}
func (replicationControllerKind) deepCopy(rc *v1.ReplicationController) *v1.ReplicationController {
	return rc.DeepCopy()
}

// NewReplicationControllerCondition returns a condition whose transition time
// is now.
func NewReplicationControllerCondition(condType v1.ReplicationControllerConditionType, status v1.ConditionStatus, reason, msg string) v1.ReplicationControllerCondition {
	return replicationControllerKind{}.newCondition(condType, status, reason, msg, metav1.Now())
}

// GetReplicationControllerCondition is GetCondition for ReplicationControllers.
func GetReplicationControllerCondition(status v1.ReplicationControllerStatus, condType v1.ReplicationControllerConditionType) *v1.ReplicationControllerCondition {
	return getCondition[replicationControllerKind](status.Conditions, condType)
}

// SetReplicationControllerCondition is SetCondition for ReplicationControllers.
func SetReplicationControllerCondition(status *v1.ReplicationControllerStatus, condition v1.ReplicationControllerCondition) error {
	if status == nil {
		return errNilStatus("SetReplicationControllerCondition")
	}
	status.Conditions = setCondition[replicationControllerKind](status.Conditions, condition)
	return nil
}

// RemoveReplicationControllerCondition is RemoveCondition for
// ReplicationControllers.
func RemoveReplicationControllerCondition(status *v1.ReplicationControllerStatus, condType v1.ReplicationControllerConditionType) error {
	if status == nil {
		return errNilStatus("RemoveReplicationControllerCondition")
	}
	status.Conditions = removeCondition[replicationControllerKind](status.Conditions, condType)
	return nil
}

// UpdateReplicationControllerStatus is UpdateReplicaSetStatus for
// ReplicationControllers, with the same steady-state short-circuit, retry
// budget (2 updates, 1 get) and error rules. The steady-state check has no
// terminatingReplicas to compare.
func UpdateReplicationControllerStatus(ctx context.Context, client corev1client.ReplicationControllerInterface, rc *v1.ReplicationController, newStatus v1.ReplicationControllerStatus) (*v1.ReplicationController, error) {
	// A nil client converts to a nil statusWriter, which the core reports.
	return updateStatus[replicationControllerKind](ctx, client, rc, newStatus)
}
