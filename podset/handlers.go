package podset

import (
	"fmt"
	"reflect"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/podstate"
)

// The handlers are the informer event handlers New registers. They are
// exported so that another framework (controller-runtime) can feed the same
// core its events. They only read the caches, touch expectations and enqueue
// keys; they never call the API.

// OnOwnerAdd enqueues a new owner.
func (c *Controller[O]) OnOwnerAdd(obj any) {
	o, ok := c.asOwner(obj)
	if !ok {
		return
	}
	c.logger.V(4).Info("Adding", "kind", c.gvk.Kind, "owner", klog.KObj(o))
	c.enqueue(o)
}

// OnOwnerUpdate enqueues on every update, resyncs included, as upstream does:
// with a resync period on the informer that periodically re-checks every
// owner. A changed UID means the owner was deleted and re-created between two
// observations, so the old incarnation is deleted first.
func (c *Controller[O]) OnOwnerUpdate(oldObj, curObj any) {
	cur, ok := c.asOwner(curObj)
	if !ok {
		return
	}
	if old, ok := c.asOwner(oldObj); ok {
		if old.GetUID() != cur.GetUID() {
			c.OnOwnerDelete(cache.DeletedFinalStateUnknown{Key: ownerKey(old), Obj: old})
		}
		if oldN, curN := c.kind.Replicas(old), c.kind.Replicas(cur); oldN != curN {
			c.logger.V(4).Info("Desired pod count changed", "kind", c.gvk.Kind, "owner", klog.KObj(cur),
				"oldReplicas", oldN, "newReplicas", curN)
		}
	}
	c.enqueue(cur)
}

// OnOwnerDelete drops the owner's expectations and read-your-writes record
// and enqueues it, so that a sync sees it gone.
func (c *Controller[O]) OnOwnerDelete(obj any) {
	o, ok := c.asOwner(unwrapTombstone(obj))
	if !ok {
		utilruntime.HandleError(fmt.Errorf("deleted object of type %T is not a usable %s", obj, c.gvk.Kind))
		return
	}
	c.logger.V(4).Info("Deleting", "kind", c.gvk.Kind, "owner", klog.KObj(o))
	// Keyed by UID, so a re-created owner of the same name is unaffected.
	c.expectations.DeleteExpectations(expectations.OwnerKeyFor(o))
	if c.guard != nil {
		c.guard.Clear(expectations.OwnerKeyFor(o))
	}
	c.enqueue(o)
}

// OnPodAdd observes a creation for the pod's owner, or wakes the owners that
// could adopt an orphan. A pod that arrives already terminating is a
// deletion: on a restart of the controller it is the only event it gets.
func (c *Controller[O]) OnPodAdd(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod == nil {
		return
	}
	if pod.DeletionTimestamp != nil {
		c.OnPodDelete(pod)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		o, ok := c.resolveControllerRef(pod.Namespace, ref)
		if !ok {
			return
		}
		c.logger.V(4).Info("Pod created", "pod", klog.KObj(pod), "owner", klog.KObj(o))
		c.expectations.CreationObserved(expectations.OwnerKeyFor(o))
		c.enqueue(o)
		return
	}
	for _, o := range c.ownersSelecting(pod) {
		c.enqueue(o)
	}
}

// OnPodUpdate wakes every owner the change can matter to: the old and new
// controller when the controllerRef moved, and the matching owners of an
// orphan whose labels or ref changed.
func (c *Controller[O]) OnPodUpdate(oldObj, curObj any) {
	cur, ok := curObj.(*v1.Pod)
	old, ok2 := oldObj.(*v1.Pod)
	if !ok || !ok2 || cur == nil || old == nil {
		return
	}
	if cur.ResourceVersion == old.ResourceVersion {
		// A periodic resync: nothing changed.
		return
	}
	labelChanged := !reflect.DeepEqual(cur.Labels, old.Labels)
	if cur.DeletionTimestamp != nil {
		// Graceful deletion sets the timestamp long before the pod goes;
		// counting it now lets the owner replace it without waiting. If the
		// labels changed too, the old labels' owner may need a wake-up.
		c.OnPodDelete(cur)
		if labelChanged {
			c.OnPodDelete(old)
		}
		return
	}
	curRef := metav1.GetControllerOfNoCopy(cur)
	oldRef := metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if o, ok := c.resolveControllerRef(old.Namespace, oldRef); ok {
			c.enqueue(o)
		}
	}
	if curRef != nil {
		o, ok := c.resolveControllerRef(cur.Namespace, curRef)
		if !ok {
			return
		}
		c.enqueue(o)
		// A pod turning ready becomes available minReadySeconds later, an
		// instant with no event of its own.
		if mrs := c.kind.MinReadySeconds(o); mrs > 0 && !podstate.IsReady(old) && podstate.IsReady(cur) {
			c.logger.V(2).Info("Pod will be checked for availability", "pod", klog.KObj(cur), "after", mrs)
			c.enqueueAfter(o, time.Duration(mrs)*time.Second)
		}
		return
	}
	if labelChanged || refChanged {
		for _, o := range c.ownersSelecting(cur) {
			c.enqueue(o)
		}
	}
}

// OnPodDelete observes a deletion for the pod's owner and enqueues it.
func (c *Controller[O]) OnPodDelete(obj any) {
	pod, ok := unwrapTombstone(obj).(*v1.Pod)
	if !ok || pod == nil {
		utilruntime.HandleError(fmt.Errorf("deleted object of type %T is not a usable pod", obj))
		return
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return
	}
	o, ok := c.resolveControllerRef(pod.Namespace, ref)
	if !ok {
		return
	}
	c.logger.V(4).Info("Pod deleted", "pod", klog.KObj(pod), "terminating", pod.DeletionTimestamp != nil, "owner", klog.KObj(o))
	c.expectations.DeletionObserved(expectations.OwnerKeyForRef(pod.Namespace, ref), podstate.Key(pod))
	c.enqueue(o)
}

// asOwner unwraps an informer object of type O; ok is false for anything
// else, a nil pointer included.
func (c *Controller[O]) asOwner(obj any) (O, bool) {
	o, ok := obj.(O)
	if !ok || any(o) == any(*new(O)) {
		return o, false
	}
	return o, true
}

// resolveControllerRef returns the cached owner a controllerRef points at;
// ok is false if the ref is for another kind, names no cached owner, or names
// an owner since re-created with another UID. Only the Kind is compared, not
// the group, as upstream does.
func (c *Controller[O]) resolveControllerRef(namespace string, ref *metav1.OwnerReference) (O, bool) {
	var zero O
	if ref.Kind != c.gvk.Kind {
		return zero, false
	}
	o, err := c.kind.Get(namespace, ref.Name)
	if err != nil || any(o) == any(zero) || o.GetUID() != ref.UID {
		return zero, false
	}
	return o, true
}

// ownersSelecting lists the cached owners in the pod's namespace whose
// selector matches an orphan, as upstream's GetPodReplicaSets does: owners
// whose selector is empty or unusable select nothing. Several matches are a
// user error (overlapping selectors), reported but not fatal: all of them are
// woken and the first to claim the pod keeps it.
func (c *Controller[O]) ownersSelecting(pod *v1.Pod) []O {
	if len(pod.Labels) == 0 {
		return nil
	}
	objs, err := c.ownerIndexer.ByIndex(cache.NamespaceIndex, pod.Namespace)
	if err != nil {
		// No namespace index on this informer: scan it all.
		objs = c.ownerIndexer.List()
	}
	set := labels.Set(pod.Labels)
	var out []O
	for _, obj := range objs {
		o, ok := c.asOwner(obj)
		if !ok || o.GetNamespace() != pod.Namespace {
			continue
		}
		selector, err := c.kind.Selector(o)
		if err != nil || selector.Empty() || !selector.Matches(set) {
			continue
		}
		out = append(out, o)
	}
	if len(out) > 1 {
		utilruntime.HandleError(fmt.Errorf("user error: more than one %s is selecting pods with labels: %v",
			c.gvk.Kind, pod.Labels))
	}
	return out
}

// unwrapTombstone returns the object inside a DeletedFinalStateUnknown, or
// obj itself.
func unwrapTombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}
