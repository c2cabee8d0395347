package status

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// statusUpdateRetries is how many times a failed status update is retried
// after re-reading the object: one, as upstream, so one sync costs at most two
// UpdateStatus calls and one Get. Anything beyond is the work queue's job,
// with rate limiting.
const statusUpdateRetries = 1

// statusWriter is the part of a typed client the update needs. Both
// appsv1client.ReplicaSetInterface and corev1client.ReplicationControllerInterface
// have it, with O their object pointer type.
type statusWriter[O any] interface {
	UpdateStatus(ctx context.Context, obj O, opts metav1.UpdateOptions) (O, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (O, error)
}

// objectRef is what the core needs of an object pointer: its metadata, and a
// way to tell a nil pointer without reflection.
type objectRef interface {
	comparable
	metav1.Object
}

// objectKind adapts one workload kind (its object pointer O, status S and
// condition C) to the kind-neutral update.
type objectKind[O objectRef, S any, C comparable] interface {
	kindName() string
	statusOf(O) *S
	view(*S) statusView[C]
	setObservedGeneration(*S, int64)
	deepCopy(O) O
}

// statusView is the kind-neutral reading of a replica status. terminating is
// always nil for kinds without the field.
type statusView[C comparable] struct {
	counts             ReplicaCounts
	terminating        *int32
	observedGeneration int64
	conditions         []C
}

// sameReplicas reports whether two statuses agree on everything the
// controller computes: the counts, the terminating count (nil differs from
// any number) and the conditions (nil differs from empty). observedGeneration
// is left out; the caller compares it with the object's generation.
func (v statusView[C]) sameReplicas(o statusView[C]) bool {
	if v.counts != o.counts {
		return false
	}
	if (v.terminating == nil) != (o.terminating == nil) ||
		(v.terminating != nil && *v.terminating != *o.terminating) {
		return false
	}
	return conditionsEqual(v.conditions, o.conditions)
}

// updateStatus writes newStatus to obj's status subresource with upstream's
// rules:
//   - steady state: when newStatus matches the current status and the current
//     generation was already observed, no call is made and obj is returned;
//   - newStatus.observedGeneration becomes obj's generation, captured once, so
//     a retry on a fresher object never claims a generation not acted on;
//   - a failed update is followed by one Get and one more update of the fresh
//     object, still carrying newStatus; then the error is returned (a conflict
//     stays a conflict for apierrors.IsConflict) so the caller requeues.
//
// Unlike upstream, obj is never modified: the update goes through a copy, so a
// caller passing an object straight from an informer cache can't corrupt it.
func updateStatus[K objectKind[O, S, C], O objectRef, S any, C comparable](ctx context.Context, client statusWriter[O], obj O, newStatus S) (O, error) {
	var k K
	var zero O
	kind := k.kindName()
	switch {
	case obj == zero:
		return zero, fmt.Errorf("status: update %s status: %w", kind, ErrNilObject)
	case ctx == nil:
		return zero, fmt.Errorf("status: update %s %s/%s status: %w", kind, obj.GetNamespace(), obj.GetName(), ErrNilContext)
	case client == nil:
		return zero, fmt.Errorf("status: update %s %s/%s status: %w", kind, obj.GetNamespace(), obj.GetName(), ErrNilClient)
	}

	current := k.view(k.statusOf(obj))
	if obj.GetGeneration() == current.observedGeneration && current.sameReplicas(k.view(&newStatus)) {
		return obj, nil
	}
	k.setObservedGeneration(&newStatus, obj.GetGeneration())

	logger := klog.FromContext(ctx)
	target := k.deepCopy(obj)
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return zero, fmt.Errorf("status: update %s %s/%s status: %w", kind, obj.GetNamespace(), obj.GetName(), err)
		}
		if logger.V(4).Enabled() {
			next := k.view(&newStatus)
			logger.V(4).Info("Updating status", "kind", kind, "object", klog.KObj(target), "attempt", attempt,
				"replicas", next.counts.Replicas, "fullyLabeledReplicas", next.counts.FullyLabeledReplicas,
				"readyReplicas", next.counts.ReadyReplicas, "availableReplicas", next.counts.AvailableReplicas,
				"observedGeneration", next.observedGeneration)
		}
		*k.statusOf(target) = newStatus
		updated, err := client.UpdateStatus(ctx, target, metav1.UpdateOptions{})
		if err == nil {
			if updated == zero {
				return zero, fmt.Errorf("status: update %s %s/%s status: client returned no object: %w", kind, obj.GetNamespace(), obj.GetName(), ErrNilObject)
			}
			return updated, nil
		}
		if attempt >= statusUpdateRetries {
			return zero, fmt.Errorf("status: update %s %s/%s status (%d attempts): %w", kind, obj.GetNamespace(), obj.GetName(), attempt+1, err)
		}
		if cerr := ctx.Err(); cerr != nil {
			return zero, fmt.Errorf("status: update %s %s/%s status: %w (not retried: %w)", kind, obj.GetNamespace(), obj.GetName(), err, cerr)
		}
		fresh, getErr := client.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if getErr != nil {
			// Without a fresh resourceVersion the retry can only conflict;
			// the read failure is the more telling error.
			return zero, fmt.Errorf("status: re-read %s %s/%s after failed status update: %w", kind, obj.GetNamespace(), obj.GetName(), getErr)
		}
		if fresh == zero {
			return zero, fmt.Errorf("status: re-read %s %s/%s: client returned no object: %w", kind, obj.GetNamespace(), obj.GetName(), ErrNilObject)
		}
		// Copy even a fresh object: a client wrapper may serve it from a cache.
		target = k.deepCopy(fresh)
	}
}
