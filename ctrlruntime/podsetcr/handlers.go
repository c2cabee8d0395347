package podsetcr

import (
	"context"

	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
	"github.com/ctrlkit/ctrlkit/podset"
)

type queue = ctrlruntime.RequestQueue

// PodHandler feeds pod events to podset: it records the creations and
// deletions they fulfil and queues the owners they matter to, with
// upstream ReplicaSet's rules (podset's Observe methods), orphans'
// possible adopters included.
type PodHandler[O client.Object] struct{ core *podset.Reconciler[O] }

// Create implements handler.EventHandler.
func (h PodHandler[O]) Create(_ context.Context, e event.TypedCreateEvent[client.Object], q queue) {
	add(q, h.core.ObservePodAdd(e.Object), e.IsInInitialList)
}

// Update implements handler.EventHandler.
func (h PodHandler[O]) Update(_ context.Context, e event.TypedUpdateEvent[client.Object], q queue) {
	add(q, h.core.ObservePodUpdate(e.ObjectOld, e.ObjectNew), false)
}

// Delete implements handler.EventHandler. A deletion whose final state is
// unknown is handed over as client-go's tombstone, as an informer would.
func (h PodHandler[O]) Delete(_ context.Context, e event.TypedDeleteEvent[client.Object], q queue) {
	add(q, h.core.ObservePodDelete(tombstoneIf(e)), false)
}

// Generic implements handler.EventHandler; a generic event says nothing
// about creations or deletions.
func (h PodHandler[O]) Generic(context.Context, event.TypedGenericEvent[client.Object], queue) {}

// OwnerHandler queues owners on their events and, when one is deleted,
// drops its expectations and read-your-writes record.
type OwnerHandler[O client.Object] struct{ core *podset.Reconciler[O] }

// Create implements handler.EventHandler.
func (h OwnerHandler[O]) Create(_ context.Context, e event.TypedCreateEvent[client.Object], q queue) {
	add(q, h.core.ObserveOwnerAdd(e.Object), e.IsInInitialList)
}

// Update implements handler.EventHandler.
func (h OwnerHandler[O]) Update(_ context.Context, e event.TypedUpdateEvent[client.Object], q queue) {
	add(q, h.core.ObserveOwnerUpdate(e.ObjectOld, e.ObjectNew), false)
}

// Delete implements handler.EventHandler.
func (h OwnerHandler[O]) Delete(_ context.Context, e event.TypedDeleteEvent[client.Object], q queue) {
	add(q, h.core.ObserveOwnerDelete(tombstoneIf(e)), false)
}

// Generic implements handler.EventHandler: the owner is synced.
func (h OwnerHandler[O]) Generic(_ context.Context, e event.TypedGenericEvent[client.Object], q queue) {
	add(q, h.core.ObserveOwnerAdd(e.Object), false)
}

func tombstoneIf(e event.TypedDeleteEvent[client.Object]) any {
	if e.DeleteStateUnknown {
		return cache.DeletedFinalStateUnknown{Key: client.ObjectKeyFromObject(e.Object).String(), Obj: e.Object}
	}
	return e.Object
}

// add queues the owners behind podset's keys; those an initial list names
// go in at low priority (ctrlruntime.Enqueue).
func add(q queue, keys []string, initialList bool) {
	for _, key := range keys {
		ctrlruntime.EnqueueKey(q, key, initialList)
	}
}
