package childsetcr

import (
	"context"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/ctrlruntime"
)

// Queue is the work queue controller-runtime hands to event handlers.
type Queue = ctrlruntime.RequestQueue

// ChildHandler is the event handler for the child kind. Each event feeds
// the core's expectations through its Observe methods (a creation it sees
// lowers the owner's pending creations, a deletion its pending deletions)
// and enqueues the owner the child names as its controller. For an orphan,
// it enqueues every owner of the child's namespace whose selector matches
// the child, since one of them may adopt it. Owners are read from the
// manager's cache, so the handler makes no API call.
type ChildHandler[O, C client.Object] struct {
	core     *childset.Reconciler[O, C]
	selector func(owner O) (labels.Selector, error)
	reader   client.Reader
	owners   client.ObjectList
}

var _ handler.EventHandler = (*ChildHandler[client.Object, client.Object])(nil)

// NewChildHandler returns the handler feeding core, which matches orphans
// with spec's selectors against the owners reader lists (O must be
// registered in scheme with its list kind). A nil argument panics.
func NewChildHandler[O, C client.Object](core *childset.Reconciler[O, C], spec Spec[O, C], reader client.Reader, scheme *runtime.Scheme) (*ChildHandler[O, C], error) {
	if core == nil || spec == nil || reader == nil || scheme == nil {
		panic("childsetcr: NewChildHandler: nil core, spec, reader or scheme")
	}
	owner, err := newObject[O](spec.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	owners, err := listFor(owner, scheme)
	if err != nil {
		return nil, err
	}
	return &ChildHandler[O, C]{core: core, selector: spec.Selector, reader: reader, owners: owners}, nil
}

// Create observes a new child (or, if it is already being deleted, its
// deletion) and enqueues its owner, or the owners that may adopt an orphan.
func (h *ChildHandler[O, C]) Create(ctx context.Context, e event.CreateEvent, q Queue) {
	child, ok := e.Object.(C)
	if !ok {
		return
	}
	if key := h.core.ObserveAdd(child); key != "" {
		ctrlruntime.EnqueueKey(q, key, e.IsInInitialList)
		return
	}
	if isLiveOrphan(child) {
		h.enqueueMatching(ctx, child, q, e.IsInInitialList)
	}
}

// Update observes a change of child: a deletion that began counts as the
// deletion, and a controller reference that moved enqueues both owners.
// Resyncs (the same resourceVersion) are ignored. An orphan that was just
// released, or whose labels changed, enqueues the owners that may adopt it.
func (h *ChildHandler[O, C]) Update(ctx context.Context, e event.UpdateEvent, q Queue) {
	old, ok1 := e.ObjectOld.(C)
	cur, ok2 := e.ObjectNew.(C)
	if !ok1 || !ok2 || old.GetResourceVersion() == cur.GetResourceVersion() {
		return
	}
	for _, key := range h.core.ObserveUpdate(old, cur) {
		ctrlruntime.EnqueueKey(q, key, false)
	}
	released := metav1.GetControllerOfNoCopy(old) != nil
	if isLiveOrphan(cur) && (released || !maps.Equal(old.GetLabels(), cur.GetLabels())) {
		h.enqueueMatching(ctx, cur, q, false)
	}
}

// Delete observes a deletion and enqueues the owner. When the informer
// missed the deletion and found the child gone at a relist
// (DeleteStateUnknown), the object is the last state it saw, which may be
// older than an adoption or a release: the deletion is still observed for
// the owner that state names (no one else expected it), and the owners
// whose selector matches the child are synced as well, since one of them
// may have held it since.
func (h *ChildHandler[O, C]) Delete(ctx context.Context, e event.DeleteEvent, q Queue) {
	child, ok := e.Object.(C)
	if !ok {
		return
	}
	if key := h.core.ObserveDelete(child); key != "" {
		ctrlruntime.EnqueueKey(q, key, false)
	}
	if e.DeleteStateUnknown {
		h.enqueueMatching(ctx, child, q, false)
	}
}

// Generic enqueues the child's owner, or the owners that may adopt an
// orphan, and observes nothing.
func (h *ChildHandler[O, C]) Generic(ctx context.Context, e event.GenericEvent, q Queue) {
	child, ok := e.Object.(C)
	if !ok {
		return
	}
	if ref := metav1.GetControllerOfNoCopy(child); ref != nil {
		ctrlruntime.Enqueue(q, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: child.GetNamespace(), Name: ref.Name}}, false)
		return
	}
	if isLiveOrphan(child) {
		h.enqueueMatching(ctx, child, q, false)
	}
}

// enqueueMatching enqueues every owner of child's namespace whose selector
// selects it (claim.Selecting; the callers tell orphans apart): a missing,
// empty or invalid selector selects nothing, as the core would refuse it. A failed list is logged: a handler
// has no one to return an error to, and the next event tries again.
func (h *ChildHandler[O, C]) enqueueMatching(ctx context.Context, child C, q Queue, initialList bool) {
	logger := log.FromContext(ctx)
	list := h.owners.DeepCopyObject().(client.ObjectList)
	if err := h.reader.List(ctx, list, client.InNamespace(child.GetNamespace())); err != nil {
		logger.Error(err, "Listing the owners that may adopt an orphan", "child", client.ObjectKeyFromObject(child))
		return
	}
	owners, err := extract[O](list)
	if err != nil {
		logger.Error(err, "Reading the owners that may adopt an orphan")
		return
	}
	for _, owner := range claim.Selecting(labels.Set(child.GetLabels()), owners, h.selector) {
		ctrlruntime.Enqueue(q, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: owner.GetNamespace(), Name: owner.GetName()}}, initialList)
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

// Update does nothing.
func (*OwnerHandler[O, C]) Update(context.Context, event.UpdateEvent, Queue) {}

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

// isLiveOrphan reports a child without any controller that is not being
// deleted: the only kind of object an owner may adopt.
func isLiveOrphan(obj client.Object) bool {
	return metav1.GetControllerOfNoCopy(obj) == nil && obj.GetDeletionTimestamp() == nil
}
