package status

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
)

// replicaSetKind adapts ReplicaSets to the kind-neutral core.
type replicaSetKind struct{}

func (replicaSetKind) condType(c appsv1.ReplicaSetCondition) appsv1.ReplicaSetConditionType {
	return c.Type
}
func (replicaSetKind) condStatus(c appsv1.ReplicaSetCondition) v1.ConditionStatus { return c.Status }
func (replicaSetKind) condReason(c appsv1.ReplicaSetCondition) string             { return c.Reason }
func (replicaSetKind) newCondition(t appsv1.ReplicaSetConditionType, s v1.ConditionStatus, reason, msg string, at metav1.Time) appsv1.ReplicaSetCondition {
	return appsv1.ReplicaSetCondition{Type: t, Status: s, LastTransitionTime: at, Reason: reason, Message: msg}
}

func (replicaSetKind) kindName() string { return "ReplicaSet" }
func (replicaSetKind) statusOf(rs *appsv1.ReplicaSet) *appsv1.ReplicaSetStatus {
	return &rs.Status
}
func (replicaSetKind) view(s *appsv1.ReplicaSetStatus) statusView[appsv1.ReplicaSetCondition] {
	return statusView[appsv1.ReplicaSetCondition]{
		counts:             ReplicaCounts{s.Replicas, s.FullyLabeledReplicas, s.ReadyReplicas, s.AvailableReplicas},
		terminating:        s.TerminatingReplicas,
		observedGeneration: s.ObservedGeneration,
		conditions:         s.Conditions,
	}
}
func (replicaSetKind) setObservedGeneration(s *appsv1.ReplicaSetStatus, g int64) {
	s.ObservedGeneration = g
}
func (replicaSetKind) deepCopy(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet { return rs.DeepCopy() }

// NewReplicaSetCondition returns a condition whose transition time is now.
func NewReplicaSetCondition(condType appsv1.ReplicaSetConditionType, status v1.ConditionStatus, reason, msg string) appsv1.ReplicaSetCondition {
	return replicaSetKind{}.newCondition(condType, status, reason, msg, metav1.Now())
}

// GetCondition returns a copy of the first condition of condType in status,
// or nil when there is none. Writing through the result leaves status alone.
func GetCondition(status appsv1.ReplicaSetStatus, condType appsv1.ReplicaSetConditionType) *appsv1.ReplicaSetCondition {
	return getCondition[replicaSetKind](status.Conditions, condType)
}

// SetCondition puts condition into status, replacing every condition of its
// type, and appends it last. When a condition of that type already has the
// same status and reason, status is left as it is: its transition time (and
// message) stay. A nil status gives an error wrapping ErrNilStatus; callers
// migrating from upstream, which returns nothing, compile unchanged.
func SetCondition(status *appsv1.ReplicaSetStatus, condition appsv1.ReplicaSetCondition) error {
	if status == nil {
		return errNilStatus("SetCondition")
	}
	status.Conditions = setCondition[replicaSetKind](status.Conditions, condition)
	return nil
}

// RemoveCondition removes every condition of condType from status. When none
// is left, status.Conditions becomes nil, not an empty slice. A nil status
// gives an error wrapping ErrNilStatus.
func RemoveCondition(status *appsv1.ReplicaSetStatus, condType appsv1.ReplicaSetConditionType) error {
	if status == nil {
		return errNilStatus("RemoveCondition")
	}
	status.Conditions = removeCondition[replicaSetKind](status.Conditions, condType)
	return nil
}

// UpdateReplicaSetStatus writes newStatus to rs's status subresource and
// returns the object the API server sent back.
//
// In the steady state (the counts, terminatingReplicas and conditions of
// newStatus equal rs.Status, and rs.Generation equals
// rs.Status.ObservedGeneration) no API call is made and rs itself is
// returned. Otherwise newStatus.ObservedGeneration is set to rs.Generation and
// the update is tried at most twice, with one Get in between for a fresh
// resourceVersion; the last error is returned wrapped (apierrors.IsConflict
// and friends still see it), and the caller should requeue. rs is not
// modified. A nil rs, client or ctx gives an error wrapping ErrNilObject,
// ErrNilClient or ErrNilContext. The logger comes from ctx (klog.FromContext).
func UpdateReplicaSetStatus(ctx context.Context, client appsv1client.ReplicaSetInterface, rs *appsv1.ReplicaSet, newStatus appsv1.ReplicaSetStatus) (*appsv1.ReplicaSet, error) {
	// A nil client converts to a nil statusWriter, which the core reports.
	return updateStatus[replicaSetKind](ctx, client, rs, newStatus)
}
