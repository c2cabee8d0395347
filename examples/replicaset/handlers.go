package replicaset

import (
	"fmt"
	"reflect"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/podstate"
)

// The handlers run on the informers' goroutines: they only read the cache,
// touch expectations and enqueue keys, never call the API.

func (c *Controller) addOwner(logger klog.Logger, obj any) {
	o, ok := c.kind.fromObject(obj)
	if !ok {
		return
	}
	logger.V(4).Info("Adding", "kind", c.kind.groupVersionKind().Kind, "owner", klog.KObj(o))
	c.enqueue(o)
}

// updateOwner enqueues on every update, resyncs included, as upstream does:
// with a resync period on the informer factory that periodically re-checks
// every owner. A changed UID means the owner was deleted and re-created
// between two observations, so the old incarnation is deleted first.
func (c *Controller) updateOwner(logger klog.Logger, oldObj, curObj any) {
	cur, ok := c.kind.fromObject(curObj)
	if !ok {
		return
	}
	if old, ok := c.kind.fromObject(oldObj); ok {
		if old.GetUID() != cur.GetUID() {
			c.deleteOwner(logger, cache.DeletedFinalStateUnknown{Key: ownerKey(old), Obj: old.object()})
		}
		if old.replicas() != cur.replicas() {
			logger.V(4).Info("Desired pod count changed", "kind", c.kind.groupVersionKind().Kind, "owner", klog.KObj(cur),
				"oldReplicas", old.replicas(), "newReplicas", cur.replicas())
		}
	}
	c.enqueue(cur)
}

func (c *Controller) deleteOwner(logger klog.Logger, obj any) {
	o, ok := c.kind.fromObject(unwrapTombstone(obj))
	if !ok {
		utilruntime.HandleError(fmt.Errorf("deleted object is not a %s: %#v", c.kind.groupVersionKind().Kind, obj))
		return
	}
	logger.V(4).Info("Deleting", "kind", c.kind.groupVersionKind().Kind, "owner", klog.KObj(o))
	// Keyed by UID, so a re-created owner of the same name is unaffected.
	c.expectations.DeleteExpectations(expectations.OwnerKeyFor(o))
	c.enqueue(o)
}

// addPod observes a creation for the pod's owner, or wakes the owners that
// could adopt an orphan. A pod that arrives already terminating is a
// deletion: on a restart of the controller it is the only event it gets.
func (c *Controller) addPod(logger klog.Logger, obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod == nil {
		return
	}
	if pod.DeletionTimestamp != nil {
		c.deletePod(logger, pod)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		o := c.resolveControllerRef(pod.Namespace, ref)
		if o == nil {
			return
		}
		logger.V(4).Info("Pod created", "pod", klog.KObj(pod), "owner", klog.KObj(o))
		c.expectations.CreationObserved(expectations.OwnerKeyFor(o))
		c.enqueue(o)
		return
	}
	for _, o := range c.ownersSelecting(pod) {
		c.enqueue(o)
	}
}

// updatePod wakes every owner the change can matter to: the old and new
// controller when the controllerRef moved, and the matching owners of an
// orphan whose labels or ref changed.
func (c *Controller) updatePod(logger klog.Logger, oldObj, curObj any) {
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
		c.deletePod(logger, cur)
		if labelChanged {
			c.deletePod(logger, old)
		}
		return
	}
	curRef := metav1.GetControllerOfNoCopy(cur)
	oldRef := metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if o := c.resolveControllerRef(old.Namespace, oldRef); o != nil {
			c.enqueue(o)
		}
	}
	if curRef != nil {
		o := c.resolveControllerRef(cur.Namespace, curRef)
		if o == nil {
			return
		}
		c.enqueue(o)
		// A pod turning ready becomes available minReadySeconds later, an
		// instant with no event of its own.
		if mrs := o.minReadySeconds(); mrs > 0 && !podstate.IsReady(old) && podstate.IsReady(cur) {
			logger.V(2).Info("Pod will be checked for availability", "pod", klog.KObj(cur), "after", mrs)
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

func (c *Controller) deletePod(logger klog.Logger, obj any) {
	pod, ok := unwrapTombstone(obj).(*v1.Pod)
	if !ok || pod == nil {
		utilruntime.HandleError(fmt.Errorf("deleted object is not a pod: %#v", obj))
		return
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return
	}
	o := c.resolveControllerRef(pod.Namespace, ref)
	if o == nil {
		return
	}
	logger.V(4).Info("Pod deleted", "pod", klog.KObj(pod), "deletionTimestamp", pod.DeletionTimestamp, "owner", klog.KObj(o))
	c.expectations.DeletionObserved(expectations.OwnerKeyForRef(pod.Namespace, ref), podstate.Key(pod))
	c.enqueue(o)
}

// resolveControllerRef returns the cached owner a controllerRef points at,
// or nil if the ref is for another kind, names no cached owner, or names an
// owner since re-created with another UID. Only the Kind is compared, not
// the group, as upstream does.
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) owner {
	if ref.Kind != c.kind.groupVersionKind().Kind {
		return nil
	}
	o, err := c.kind.get(namespace, ref.Name)
	if err != nil || o.GetUID() != ref.UID {
		return nil
	}
	return o
}

// ownersSelecting lists the owners whose selector matches an orphan. Several
// matches are a user error (overlapping selectors), reported but not fatal:
// all of them are woken and the first to claim the pod keeps it.
func (c *Controller) ownersSelecting(pod *v1.Pod) []owner {
	owners := c.kind.selecting(pod)
	if len(owners) > 1 {
		utilruntime.HandleError(fmt.Errorf("user error: more than one %s is selecting pods with labels: %v",
			c.kind.groupVersionKind().Kind, pod.Labels))
	}
	return owners
}

// unwrapTombstone returns the object inside a DeletedFinalStateUnknown, or
// obj itself.
func unwrapTombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}
