package expecthandler

import (
	"context"
	"maps"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/claim"
)

// OrphanHandler is the event handler that lets owners adopt orphans: for an
// object of the owned kind without a controller reference, it enqueues every
// owner (of type O) in the object's namespace whose selector matches the
// object's labels, as upstream's ReplicaSet controller does. Objects with a
// controller reference are left to the Tracker's Handler; watch the owned
// kind with both.
//
// Like upstream it acts on an orphan's creation, on an update that releases
// an object or changes its labels, and on a generic event; an orphan being
// deleted, or deleted, concerns nobody. An owner whose selector is missing,
// empty or invalid matches nothing. Owners are listed through reader (the
// manager's cached client), so the handler makes no API call.
type OrphanHandler[T client.Object, O client.Object] struct {
	reader   client.Reader
	owners   client.ObjectList
	selector func(owner O) *metav1.LabelSelector
}

var _ handler.TypedEventHandler[client.Object, reconcile.Request] = (*OrphanHandler[client.Object, client.Object])(nil)

// NewOrphanHandler returns the orphan handler for Watches(&corev1.Pod{}, ...):
// owners is an empty list of the owner kind (&appsv1.ReplicaSetList{}), only
// used as a template, and selector returns an owner's selector. A nil reader,
// owners or selector panics.
func NewOrphanHandler[O client.Object](reader client.Reader, owners client.ObjectList, selector func(owner O) *metav1.LabelSelector) *OrphanHandler[client.Object, O] {
	return NewTypedOrphanHandler[client.Object](reader, owners, selector)
}

// NewTypedOrphanHandler is NewOrphanHandler for typed sources (source.Kind
// with a concrete object type T).
func NewTypedOrphanHandler[T client.Object, O client.Object](reader client.Reader, owners client.ObjectList, selector func(owner O) *metav1.LabelSelector) *OrphanHandler[T, O] {
	switch {
	case reader == nil:
		panic("expecthandler: NewOrphanHandler: nil reader")
	case owners == nil:
		panic("expecthandler: NewOrphanHandler: nil owner list")
	case selector == nil:
		panic("expecthandler: NewOrphanHandler: nil selector func")
	}
	return &OrphanHandler[T, O]{reader: reader, owners: owners, selector: selector}
}

// Create enqueues the owners matching a new orphan.
func (h *OrphanHandler[T, O]) Create(ctx context.Context, e event.TypedCreateEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	obj := e.Object
	if isNil(obj) || !isLiveOrphan(obj) {
		return
	}
	h.enqueueMatching(ctx, obj, q, e.IsInInitialList)
}

// Update enqueues the owners matching an orphan that was just released or
// whose labels changed. Resyncs (same resource version) are ignored.
func (h *OrphanHandler[T, O]) Update(ctx context.Context, e event.TypedUpdateEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	oldObj, newObj := e.ObjectOld, e.ObjectNew
	if isNil(oldObj) || isNil(newObj) || oldObj.GetResourceVersion() == newObj.GetResourceVersion() || !isLiveOrphan(newObj) {
		return
	}
	released := metav1.GetControllerOfNoCopy(oldObj) != nil
	if released || !maps.Equal(oldObj.GetLabels(), newObj.GetLabels()) {
		h.enqueueMatching(ctx, newObj, q, false)
	}
}

// Delete does nothing: no owner adopts a deleted orphan.
func (h *OrphanHandler[T, O]) Delete(context.Context, event.TypedDeleteEvent[T], workqueue.TypedRateLimitingInterface[reconcile.Request]) {
}

// Generic enqueues the owners matching an orphan.
func (h *OrphanHandler[T, O]) Generic(ctx context.Context, e event.TypedGenericEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	obj := e.Object
	if isNil(obj) || !isLiveOrphan(obj) {
		return
	}
	h.enqueueMatching(ctx, obj, q, false)
}

// isLiveOrphan reports an object without a controller that is not being
// deleted.
func isLiveOrphan(obj client.Object) bool {
	return metav1.GetControllerOfNoCopy(obj) == nil && obj.GetDeletionTimestamp() == nil
}

// enqueueMatching enqueues every owner in obj's namespace that may adopt it
// (claim.Adopters). A failed list is logged: an event handler has no
// one to return an error to, and the next event or resync tries again.
func (h *OrphanHandler[T, O]) enqueueMatching(ctx context.Context, obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request], initialList bool) {
	logger := log.FromContext(ctx)
	list := h.owners.DeepCopyObject().(client.ObjectList)
	if err := h.reader.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		logger.Error(err, "Listing the owners that could adopt an orphan", "object", client.ObjectKeyFromObject(obj))
		return
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		logger.Error(err, "Reading the owner list", "list", list.GetObjectKind().GroupVersionKind())
		return
	}
	owners := make([]O, 0, len(items))
	for _, item := range items {
		owner, ok := item.(O)
		if !ok {
			logger.Error(nil, "The owner list holds another type", "item", item.GetObjectKind().GroupVersionKind())
			continue
		}
		owners = append(owners, owner)
	}
	for _, owner := range claim.Adopters(obj, owners, h.labelSelector) {
		enqueueRequest(q, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: owner.GetNamespace(), Name: owner.GetName()}}, initialList)
	}
}

// labelSelector converts owner's selector; a missing one selects nothing.
func (h *OrphanHandler[T, O]) labelSelector(owner O) (labels.Selector, error) {
	ls := h.selector(owner)
	if ls == nil {
		return labels.Nothing(), nil
	}
	return metav1.LabelSelectorAsSelector(ls)
}
