package status

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// statusUpdateRetries is how many times a failed status update is retried
// after re-reading the object: one, as upstream, so one sync costs at most two
// UpdateStatus calls and one Get. Anything beyond is the work queue's job,
// with rate limiting.
const statusUpdateRetries = 1

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
// modified. The logger comes from ctx (klog.FromContext).
func UpdateReplicaSetStatus(ctx context.Context, client appsv1client.ReplicaSetInterface, rs *appsv1.ReplicaSet, newStatus appsv1.ReplicaSetStatus) (*appsv1.ReplicaSet, error) {
	cur := rs.Status
	if rs.Generation == cur.ObservedGeneration &&
		cur.Replicas == newStatus.Replicas && cur.FullyLabeledReplicas == newStatus.FullyLabeledReplicas &&
		cur.ReadyReplicas == newStatus.ReadyReplicas && cur.AvailableReplicas == newStatus.AvailableReplicas &&
		ptr.Equal(cur.TerminatingReplicas, newStatus.TerminatingReplicas) &&
		conditionsEqual(cur.Conditions, newStatus.Conditions) {
		return rs, nil
	}
	newStatus.ObservedGeneration = rs.Generation
	return updateWithRetry(ctx, "ReplicaSet", rs.DeepCopy(),
		func(target *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
			target.Status = newStatus
			return client.UpdateStatus(ctx, target, metav1.UpdateOptions{})
		},
		func(name string) (*appsv1.ReplicaSet, error) { return client.Get(ctx, name, metav1.GetOptions{}) },
		(*appsv1.ReplicaSet).DeepCopy)
}

// UpdateReplicationControllerStatus is UpdateReplicaSetStatus for
// ReplicationControllers, with the same steady-state short-circuit, retry
// budget (2 updates, 1 get) and error rules. The steady-state check has no
// terminatingReplicas to compare.
func UpdateReplicationControllerStatus(ctx context.Context, client corev1client.ReplicationControllerInterface, rc *v1.ReplicationController, newStatus v1.ReplicationControllerStatus) (*v1.ReplicationController, error) {
	cur := rc.Status
	if rc.Generation == cur.ObservedGeneration &&
		cur.Replicas == newStatus.Replicas && cur.FullyLabeledReplicas == newStatus.FullyLabeledReplicas &&
		cur.ReadyReplicas == newStatus.ReadyReplicas && cur.AvailableReplicas == newStatus.AvailableReplicas &&
		conditionsEqual(cur.Conditions, newStatus.Conditions) {
		return rc, nil
	}
	newStatus.ObservedGeneration = rc.Generation
	return updateWithRetry(ctx, "ReplicationController", rc.DeepCopy(),
		func(target *v1.ReplicationController) (*v1.ReplicationController, error) {
			target.Status = newStatus
			return client.UpdateStatus(ctx, target, metav1.UpdateOptions{})
		},
		func(name string) (*v1.ReplicationController, error) {
			return client.Get(ctx, name, metav1.GetOptions{})
		},
		(*v1.ReplicationController).DeepCopy)
}

// updateWithRetry runs update on target and, after a failure, re-reads the
// object once and updates that copy, as upstream: the status to write is
// captured by update, so a retry on a fresher object never claims a
// generation not acted on. The object given in is never the caller's (the
// callers pass a copy, and the re-read object is copied too, since a client
// wrapper may serve it from a cache). A cancelled context stops it before
// the next call.
func updateWithRetry[O metav1.Object](ctx context.Context, kind string, target O,
	update func(O) (O, error), get func(name string) (O, error), deepCopy func(O) O) (O, error) {
	var zero O
	namespace, name := target.GetNamespace(), target.GetName()
	logger := klog.FromContext(ctx)
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return zero, fmt.Errorf("status: update %s %s/%s status: %w", kind, namespace, name, err)
		}
		logger.V(4).Info("Updating status", "kind", kind, "object", klog.KObj(target), "attempt", attempt)
		updated, err := update(target)
		if err == nil {
			return updated, nil
		}
		if attempt >= statusUpdateRetries {
			return zero, fmt.Errorf("status: update %s %s/%s status (%d attempts): %w", kind, namespace, name, attempt+1, err)
		}
		if cerr := ctx.Err(); cerr != nil {
			return zero, fmt.Errorf("status: update %s %s/%s status: %w (not retried: %w)", kind, namespace, name, err, cerr)
		}
		fresh, getErr := get(name)
		if getErr != nil {
			// Without a fresh resourceVersion the retry can only conflict;
			// the read failure is the more telling error.
			return zero, fmt.Errorf("status: re-read %s %s/%s after failed status update: %w", kind, namespace, name, getErr)
		}
		target = deepCopy(fresh)
	}
}
