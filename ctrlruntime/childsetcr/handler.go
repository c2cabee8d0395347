package childsetcr

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime"
)

// Queue is the work queue controller-runtime hands to event handlers.
type Queue = ctrlruntime.RequestQueue

// ChildHandler is the event handler for the child kind: each event goes to
// the core's Observe methods, which feed its expectations (a creation it
// sees lowers the owner's pending creations, a deletion its pending
// deletions), and the owners they name are enqueued: the child's
// controller, or for an orphan the owners that may adopt it, which the core
// lists through childset.WithOwnerLister (NewCore gives it the manager's
// cache). The handler makes no API call.
type ChildHandler[O, C client.Object] struct {
	core *childset.Reconciler[O, C]
}

var _ handler.EventHandler = (*ChildHandler[client.Object, client.Object])(nil)

// NewChildHandler returns the handler feeding core. A nil core panics.
func NewChildHandler[O, C client.Object](core *childset.Reconciler[O, C]) *ChildHandler[O, C] {
	if core == nil {
		panic("childsetcr: NewChildHandler: nil core")
	}
	return &ChildHandler[O, C]{core: core}
}

// Create observes a new child (or, if it is already being deleted, its
// deletion).
func (h *ChildHandler[O, C]) Create(_ context.Context, e event.CreateEvent, q Queue) {
	if child, ok := e.Object.(C); ok {
		enqueue(q, h.core.ObserveAdd(child), e.IsInInitialList)
	}
}

// Update observes a change of child (a resync changes nothing).
func (h *ChildHandler[O, C]) Update(_ context.Context, e event.UpdateEvent, q Queue) {
	old, ok1 := e.ObjectOld.(C)
	cur, ok2 := e.ObjectNew.(C)
	if ok1 && ok2 {
		enqueue(q, h.core.ObserveUpdate(old, cur), false)
	}
}

// Delete observes a deletion; one the informer missed and found at a
// relist (DeleteStateUnknown) also wakes the owners whose selector matches
// the child's last state.
func (h *ChildHandler[O, C]) Delete(_ context.Context, e event.DeleteEvent, q Queue) {
	if child, ok := e.Object.(C); ok {
		enqueue(q, h.core.ObserveDelete(child, e.DeleteStateUnknown), false)
	}
}

// Generic enqueues the child's owner, or the owners that may adopt an
// orphan, and observes nothing.
func (h *ChildHandler[O, C]) Generic(_ context.Context, e event.GenericEvent, q Queue) {
	if child, ok := e.Object.(C); ok {
		enqueue(q, h.core.OwnerKeys(child), false)
	}
}

func enqueue(q Queue, keys []string, initialList bool) {
	for _, key := range keys {
		ctrlruntime.EnqueueKey(q, key, initialList)
	}
}

// OwnerHandler observes owner deletions, so the core forgets a deleted
// owner's expectations at once rather than when they expire. It enqueues
// nothing: the builder's For handler enqueues owners.
type OwnerHandler[O, C client.Object] struct {
	core *childset.Reconciler[O, C]
}

var _ handler.EventHandler = (*OwnerHandler[client.Object, client.Object])(nil)

// NewOwnerHandler returns the owner handler of core. A nil core panics.
func NewOwnerHandler[O, C client.Object](core *childset.Reconciler[O, C]) *OwnerHandler[O, C] {
	if core == nil {
		panic("childsetcr: NewOwnerHandler: nil core")
	}
	return &OwnerHandler[O, C]{core: core}
}

// Create does nothing.
func (*OwnerHandler[O, C]) Create(context.Context, event.CreateEvent, Queue) {}

// Update observes the deletion of the old owner when the informer missed
// it, and a new owner of the same name replaced it (a changed UID); the
// For handler enqueues the owner.
func (h *OwnerHandler[O, C]) Update(_ context.Context, e event.UpdateEvent, _ Queue) {
	old, ok1 := e.ObjectOld.(O)
	cur, ok2 := e.ObjectNew.(O)
	if ok1 && ok2 {
		h.core.ObserveOwnerUpdate(old, cur)
	}
}

// Delete forgets the owner's expectations. Expectations are bound to the
// owner's UID, so a last state the informer saw before a relist
// (DeleteStateUnknown) names the same owner and is forgotten the same way.
func (h *OwnerHandler[O, C]) Delete(_ context.Context, e event.DeleteEvent, _ Queue) {
	if owner, ok := e.Object.(O); ok {
		h.core.ObserveOwnerDelete(owner)
	}
}

// Generic does nothing.
func (*OwnerHandler[O, C]) Generic(context.Context, event.GenericEvent, Queue) {}
