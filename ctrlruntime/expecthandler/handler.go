package expecthandler

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
)

// Handler is the event handler for objects owned by the tracker's kind. It
// records the creations and deletions it observes in the Tracker and
// enqueues the owner named by each object's controller reference. Objects
// without such a reference (orphans) are ignored.
type Handler[T client.Object] struct {
	tracker *Tracker
}

var _ handler.TypedEventHandler[client.Object, reconcile.Request] = (*Handler[client.Object])(nil)

// Handler returns the tracker's handler for Watches(&corev1.Pod{}, ...).
func (t *Tracker) Handler() *Handler[client.Object] { return NewHandler[client.Object](t) }

// NewHandler returns t's handler for typed sources (source.Kind with a
// concrete object type).
func NewHandler[T client.Object](t *Tracker) *Handler[T] { return &Handler[T]{tracker: t} }

// Create observes a creation, or a deletion if the object is already being
// deleted (a restarted controller lists such objects as new).
func (h *Handler[T]) Create(_ context.Context, e event.TypedCreateEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	obj := e.Object
	if isNil(obj) {
		return
	}
	ref := h.tracker.ownerRef(obj)
	if ref == nil {
		return
	}
	if obj.GetDeletionTimestamp() != nil {
		h.tracker.observeDeletion(obj, ref)
	} else {
		h.tracker.observeCreation(obj, ref)
	}
	enqueue(q, obj.GetNamespace(), ref, e.IsInInitialList)
}

// Update observes the deletion of an object whose deletion timestamp is set,
// and enqueues the owners concerned. Updates that change nothing (resyncs)
// are ignored.
func (h *Handler[T]) Update(_ context.Context, e event.TypedUpdateEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	oldObj, newObj := e.ObjectOld, e.ObjectNew
	if isNil(oldObj) || isNil(newObj) || oldObj.GetResourceVersion() == newObj.GetResourceVersion() {
		return
	}
	oldRef, newRef := h.tracker.ownerRef(oldObj), h.tracker.ownerRef(newObj)
	if oldRef != nil && (newRef == nil || oldRef.UID != newRef.UID) {
		// The owner lost this object: it may have to replace it.
		if newObj.GetDeletionTimestamp() != nil {
			h.tracker.observeDeletion(oldObj, oldRef)
		}
		enqueue(q, oldObj.GetNamespace(), oldRef, false)
	}
	if newRef == nil {
		return
	}
	if newObj.GetDeletionTimestamp() != nil {
		h.tracker.observeDeletion(newObj, newRef)
	}
	enqueue(q, newObj.GetNamespace(), newRef, false)
}

// Delete observes a deletion. Objects whose final state was unknown reach it
// as well: controller-runtime unwraps the tombstone.
func (h *Handler[T]) Delete(_ context.Context, e event.TypedDeleteEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	obj := e.Object
	if isNil(obj) {
		return
	}
	ref := h.tracker.ownerRef(obj)
	if ref == nil {
		return
	}
	h.tracker.observeDeletion(obj, ref)
	enqueue(q, obj.GetNamespace(), ref, false)
}

// Generic enqueues the owner and observes nothing.
func (h *Handler[T]) Generic(_ context.Context, e event.TypedGenericEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	obj := e.Object
	if isNil(obj) {
		return
	}
	if ref := h.tracker.ownerRef(obj); ref != nil {
		enqueue(q, obj.GetNamespace(), ref, false)
	}
}

// enqueue adds the owner's request. Objects from the initial list go in at
// controller-runtime's low priority when the queue has priorities, as
// controller-runtime's own handlers do, so real changes are served first.
func enqueue(q workqueue.TypedRateLimitingInterface[reconcile.Request], namespace string, ref *metav1.OwnerReference, initialList bool) {
	enqueueRequest(q, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: ref.Name}}, initialList)
}

func enqueueRequest(q workqueue.TypedRateLimitingInterface[reconcile.Request], req reconcile.Request, initialList bool) {
	ctrlruntime.Enqueue(q, req, initialList)
}

// isNil reports an event without an object. A typed nil pointer is a
// programmer error and is not looked for.
func isNil(obj client.Object) bool { return obj == nil }
