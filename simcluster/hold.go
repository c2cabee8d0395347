package simcluster

import (
	"cmp"
	"slices"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// watchHold is the state of one held resource: the watch-visible state at
// the moment the hold began, which is what a lagging watch cache still
// serves, and where in the resourceVersion sequence it stands.
type watchHold struct {
	count int   // holds not yet released; delivery resumes at zero
	from  int64 // the cluster's resourceVersion when the hold began
	view  map[types.NamespacedName]runtime.Object
}

// HoldWatches holds back watch delivery for resource gvr (for example
// v1.SchemeGroupVersion.WithResource("pods"), or the plural a custom
// resource is stored under), as a lagging informer cache would see it:
// writes still succeed and Get or a List without a resourceVersion show
// them at once, but their events wait, on every open watch of gvr and on
// watches opened meanwhile, until release is called; then each watch gets
// them in order. Other resources are not affected.
//
// An informer that relists during the hold does not see the held writes
// early: its list (resourceVersion "0", served by an apiserver from its
// watch cache) shows gvr as it stood when the hold began, and the watch it
// opens from that list's resourceVersion holds the writes made since. Only
// a consistent list (resourceVersion ""), which a reflector makes after a
// 410 Gone, shows the live state, as a quorum read from etcd would.
//
// Holds nest: delivery resumes when every hold of gvr is released. release
// may be called more than once; calls after the first do nothing.
func (c *Cluster) HoldWatches(gvr schema.GroupVersionResource) (release func()) {
	c.tracker.hold(gvr)
	var once sync.Once
	return func() { once.Do(func() { c.tracker.release(gvr) }) }
}

// hold starts or nests a hold of gvr.
func (t *apiTracker) hold(gvr schema.GroupVersionResource) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.catchUp(gvr)
	if h := t.holds[gvr]; h != nil {
		h.count++
		return
	}
	// The objects in current are never modified (dispatch stores copies
	// and replaces them), so copying the map is a snapshot.
	view := make(map[types.NamespacedName]runtime.Object, len(t.current[gvr]))
	for k, obj := range t.current[gvr] {
		view[k] = obj
	}
	t.holds[gvr] = &watchHold{count: 1, from: t.rv, view: view}
	for w := range t.watchers {
		if w.gvr == gvr {
			w.hold()
		}
	}
}

// release ends one hold of gvr; the last one sends every watch its held
// events.
func (t *apiTracker) release(gvr schema.GroupVersionResource) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.holds[gvr]
	if h == nil {
		return
	}
	if h.count--; h.count > 0 {
		return
	}
	delete(t.holds, gvr)
	for w := range t.watchers {
		if w.gvr == gvr {
			w.release()
		}
	}
}

// heldListLocked is a List served from a held resource's watch-visible
// state: the list type comes from the store (which knows the kind), the
// items from the hold's view, the resourceVersion is where the hold began.
// mu must be held.
func (t *apiTracker) heldListLocked(h *watchHold, gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, ns string) (runtime.Object, error) {
	list, err := t.ObjectTracker.List(gvr, gvk, ns)
	if err != nil {
		return nil, err
	}
	keys := make([]types.NamespacedName, 0, len(h.view))
	for k := range h.view {
		if ns == "" || k.Namespace == ns {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b types.NamespacedName) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	items := make([]runtime.Object, len(keys))
	for i, k := range keys {
		items[i] = h.view[k].DeepCopyObject()
	}
	if err := meta.SetList(list, items); err != nil {
		return nil, err
	}
	if lm, err := meta.ListAccessor(list); err == nil {
		lm.SetResourceVersion(strconv.FormatInt(h.from, 10))
	}
	return list, nil
}

// keepFromLocked is the lowest resourceVersion the event log must keep
// events after, so that a watch opened during a hold can still be handed
// every held event; -1 when nothing is held. mu must be held.
func (t *apiTracker) keepFromLocked() int64 {
	keep := int64(-1)
	for _, h := range t.holds {
		if keep < 0 || h.from < keep {
			keep = h.from
		}
	}
	return keep
}
