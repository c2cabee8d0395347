package claim

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// ControllerIndexKey files an object of namespace under its controller ref:
// "namespace/kind/name/uid", or "namespace" alone for orphans (nil ref).
// The kind and name are part of the key so that a stale UID pointing at
// another kind never aliases an owner, and the orphans of a namespace are
// one lookup away, which is what a claim needs.
func ControllerIndexKey(namespace string, ref *metav1.OwnerReference) string {
	if ref == nil {
		return namespace
	}
	return namespace + "/" + ref.Kind + "/" + ref.Name + "/" + string(ref.UID)
}

// IndexByController is an informer index function that files every object
// under ControllerIndexKey of its controller reference. Objects without
// metadata (tombstones, foreign types) are not indexed. Each call also
// advances the clock of the key, by which an IndexListing knows that the
// key's objects did not change.
func IndexByController(obj any) ([]string, error) {
	o, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil
	}
	key := ControllerIndexKey(o.GetNamespace(), metav1.GetControllerOfNoCopy(o))
	tickIndexClock(key)
	return []string{key}, nil
}

// AddControllerIndexer registers IndexByController on informer under name,
// unless an index of that name is already there: several controllers may
// share one informer and register it concurrently. Call it before the
// informer starts.
func AddControllerIndexer(informer cache.SharedIndexInformer, name string) error {
	has := func() bool {
		_, ok := informer.GetIndexer().GetIndexers()[name]
		return ok
	}
	if has() {
		return nil
	}
	if err := informer.AddIndexers(cache.Indexers{name: IndexByController}); err != nil && !has() {
		return fmt.Errorf("adding index %q: %w", name, err)
	}
	return nil
}
