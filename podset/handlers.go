package podset

import (
	"fmt"
	"reflect"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/podstate"
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
	c.expectations.DeleteExpectations(expectations.OwnerKeyFor(o))
	c.memos.drop(ownerKey(o))
	if c.guard != nil {
		c.guard.Clear(expectations.OwnerKeyFor(o))
	}
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
	if pod.DeletionTimestamp != nil {
		return c.ObservePodDelete(pod)
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		o, ok := c.resolveControllerRef(pod.Namespace, ref)
		if !ok {
			return nil
		}
		c.logger.V(4).Info("Pod created", "pod", klog.KObj(pod), "owner", klog.KObj(o))
		c.expectations.CreationObserved(expectations.OwnerKeyFor(o))
		return []string{ownerKey(o)}
	}
	return c.ownersSelecting(pod)
}

// ObservePodUpdate returns every owner the change can matter to: the old
// and new controller when the controllerRef moved, and the matching owners
// of an orphan whose labels or ref changed.
func (c *Reconciler[O]) ObservePodUpdate(oldObj, curObj any) []string {
	cur, ok := curObj.(*v1.Pod)
	old, ok2 := oldObj.(*v1.Pod)
	if !ok || !ok2 || cur == nil || old == nil {
		return nil
	}
	if cur.ResourceVersion == old.ResourceVersion {
		// A periodic resync: nothing changed.
		return nil
	}
	labelChanged := !reflect.DeepEqual(cur.Labels, old.Labels)
	if cur.DeletionTimestamp != nil {
		// Graceful deletion sets the timestamp long before the pod goes;
		// counting it now lets the owner replace it without waiting. If the
		// labels changed too, the old labels' owner may need a wake-up.
		keys := c.ObservePodDelete(cur)
		if labelChanged {
			keys = append(keys, c.ObservePodDelete(old)...)
		}
		return keys
	}
	var keys []string
	curRef := metav1.GetControllerOfNoCopy(cur)
	oldRef := metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if o, ok := c.resolveControllerRef(old.Namespace, oldRef); ok {
			keys = append(keys, ownerKey(o))
		}
	}
	if curRef != nil {
		if o, ok := c.resolveControllerRef(cur.Namespace, curRef); ok {
			keys = append(keys, ownerKey(o))
		}
		return keys
	}
	if labelChanged || refChanged {
		keys = append(keys, c.ownersSelecting(cur)...)
	}
	return keys
}

// ObservePodDelete observes a deletion for the pod's owner and returns its
// key.
func (c *Reconciler[O]) ObservePodDelete(obj any) []string {
	pod, ok := unwrapTombstone(obj).(*v1.Pod)
	if !ok || pod == nil {
		utilruntime.HandleError(fmt.Errorf("deleted object of type %T is not a usable pod", obj))
		return nil
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return nil
	}
	o, ok := c.resolveControllerRef(pod.Namespace, ref)
	if !ok {
		return nil
	}
	c.logger.V(4).Info("Pod deleted", "pod", klog.KObj(pod), "terminating", pod.DeletionTimestamp != nil, "owner", klog.KObj(o))
	c.expectations.DeletionObserved(expectations.OwnerKeyForRef(pod.Namespace, ref), podstate.Key(pod))
	return []string{ownerKey(o)}
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

// resolveControllerRef returns the cached owner a controllerRef points at;
// ok is false if the ref is for another kind, names no cached owner, or names
// an owner since re-created with another UID. Only the Kind is compared, not
// the group, as upstream does.
func (c *Reconciler[O]) resolveControllerRef(namespace string, ref *metav1.OwnerReference) (O, bool) {
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

// ownersSelecting returns the keys of the cached owners in the pod's
// namespace that may adopt it (claim.Adopters), as upstream's
// GetPodReplicaSets finds them. Several are a user error (overlapping
// selectors), reported but not fatal: all of them are woken and the first
// to claim the pod keeps it.
func (c *Reconciler[O]) ownersSelecting(pod *v1.Pod) []string {
	objs, err := c.ownerIndexer.ByIndex(cache.NamespaceIndex, pod.Namespace)
	if err != nil {
		// No namespace index on this informer: scan it all.
		objs = c.ownerIndexer.List()
	}
	owners := make([]O, 0, len(objs))
	for _, obj := range objs {
		if o, ok := c.asOwner(obj); ok && o.GetNamespace() == pod.Namespace {
			owners = append(owners, o)
		}
	}
	adopters := claim.Adopters(pod, owners, c.kind.Selector)
	if len(adopters) == 0 {
		return nil
	}
	if len(adopters) > 1 {
		utilruntime.HandleError(fmt.Errorf("user error: more than one %s is selecting pods with labels: %v",
			c.gvk.Kind, pod.Labels))
	}
	keys := make([]string, len(adopters))
	for i, o := range adopters {
		keys[i] = ownerKey(o)
	}
	return keys
}

// unwrapTombstone returns the object inside a DeletedFinalStateUnknown, or
// obj itself.
func unwrapTombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}
