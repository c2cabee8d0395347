package podset

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// The Observe methods are the informer event handlers' logic, for any
// driver: each records what an event fulfils (expectations, the
// read-your-writes guard) and returns the "namespace/name" keys of the
// owners to sync. They read only the caches, never call the API and reach
// no queue, so a controller-runtime host feeds the same core from its own
// handlers. The On* methods, which New registers on the informers, are the
// Observe methods applied to the controller's own queue.
//
// A pod turning ready becomes available minReadySeconds later, an instant
// with no event of its own: upstream's handler queues the owner again
// after minReadySeconds. Here the sync the ready pod triggers says when in
// its Result (the next availability check), measured from the pod's ready
// time, so the handlers need no delayed key.

// ObserveOwnerAdd returns the new owner's key.
func (c *Reconciler[O]) ObserveOwnerAdd(obj any) []string {
	o, ok := c.asOwner(obj)
	if !ok {
		return nil
	}
	c.logger.V(4).Info("Adding", "kind", c.gvk.Kind, "owner", klog.KObj(o))
	return []string{ownerKey(o)}
}

// ObserveOwnerUpdate returns the owner's key on every update, resyncs
// included, as upstream does: with a resync period on the informer that
// periodically re-checks every owner. A changed UID means the owner was
// deleted and re-created between two observations, so the old incarnation
// is observed deleted first.
func (c *Reconciler[O]) ObserveOwnerUpdate(oldObj, curObj any) []string {
	cur, ok := c.asOwner(curObj)
	if !ok {
		return nil
	}
	if old, ok := c.asOwner(oldObj); ok {
		if old.GetUID() != cur.GetUID() {
			c.ObserveOwnerDelete(cache.DeletedFinalStateUnknown{Key: ownerKey(old), Obj: old})
		}
		if oldN, curN := c.kind.Replicas(old), c.kind.Replicas(cur); oldN != curN {
			c.logger.V(4).Info("Desired pod count changed", "kind", c.gvk.Kind, "owner", klog.KObj(cur),
				"oldReplicas", oldN, "newReplicas", curN)
		}
	}
	return []string{ownerKey(cur)}
}

// ObserveOwnerDelete drops the owner's expectations and read-your-writes
// record and returns its key, so that a sync sees it gone.
func (c *Reconciler[O]) ObserveOwnerDelete(obj any) []string {
	o, ok := c.asOwner(unwrapTombstone(obj))
	if !ok {
		utilruntime.HandleError(fmt.Errorf("deleted object of type %T is not a usable %s", obj, c.gvk.Kind))
		return nil
	}
	c.logger.V(4).Info("Deleting", "kind", c.gvk.Kind, "owner", klog.KObj(o))
	// Keyed by UID, so a re-created owner of the same name is unaffected.
	c.core.ObserveOwnerDelete(o)
	c.spec.rankings.Drop(ownerKey(o))
	c.spec.built.Drop(ownerKey(o))
	return []string{ownerKey(o)}
}

// ObservePodAdd observes a creation for the pod's owner, or returns the
// owners that could adopt an orphan. A pod that arrives already
// terminating is a deletion: on a restart of the controller it is the only
// event it gets.
func (c *Reconciler[O]) ObservePodAdd(obj any) []string {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod == nil {
		return nil
	}
	return c.core.ObserveAdd(pod)
}

// ObservePodUpdate returns every owner the change can matter to: the old
// and new controller when the controllerRef moved, and the matching owners
// of an orphan whose labels or ref changed. Graceful deletion sets the
// deletion timestamp long before the pod goes; counting it as deleted then
// lets the owner replace it without waiting.
func (c *Reconciler[O]) ObservePodUpdate(oldObj, curObj any) []string {
	cur, ok := curObj.(*v1.Pod)
	old, ok2 := oldObj.(*v1.Pod)
	if !ok || !ok2 || cur == nil || old == nil || cur.ResourceVersion == old.ResourceVersion {
		// Not a pod, or a periodic resync: nothing changed.
		return nil
	}
	return c.core.ObserveUpdate(old, cur)
}

// ObservePodDelete observes a deletion for the pod's owner and returns its
// key; for a deletion the informer missed (a tombstone), the owners whose
// selector matches the pod too.
func (c *Reconciler[O]) ObservePodDelete(obj any) []string {
	tomb, unknown := obj.(cache.DeletedFinalStateUnknown)
	if unknown {
		obj = tomb.Obj
	}
	pod, ok := obj.(*v1.Pod)
	if !ok || pod == nil {
		utilruntime.HandleError(fmt.Errorf("deleted object of type %T is not a usable pod", obj))
		return nil
	}
	return c.core.ObserveDelete(pod, unknown)
}

// asOwner unwraps an informer object of type O; ok is false for anything
// else, a nil pointer included.
func (c *Reconciler[O]) asOwner(obj any) (O, bool) {
	o, ok := obj.(O)
	if !ok || any(o) == any(*new(O)) {
		return o, false
	}
	return o, true
}

// unwrapTombstone returns the object inside a DeletedFinalStateUnknown, or
// obj itself.
func unwrapTombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}
