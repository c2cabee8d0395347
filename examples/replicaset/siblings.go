package replicaset

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// ownerControllerUIDIndex indexes owners by their own controller's UID (a
// Deployment for ReplicaSets), to find the sibling owners whose pods rank a
// scale-down.
const ownerControllerUIDIndex = "ctrlkit.io/owner-controller-uid"

func indexOwnerByControllerUID(obj any) ([]string, error) {
	m, ok := obj.(metav1.Object)
	if !ok || m == nil {
		return nil, nil
	}
	ref := metav1.GetControllerOfNoCopy(m)
	if ref == nil {
		return nil, nil
	}
	return []string{string(ref.UID)}, nil
}

// addOwnerControllerIndex registers the index unless the informer has it.
func addOwnerControllerIndex(inf cache.SharedIndexInformer) error {
	if _, ok := inf.GetIndexer().GetIndexers()[ownerControllerUIDIndex]; ok {
		return nil
	}
	if err := inf.AddIndexers(cache.Indexers{ownerControllerUIDIndex: indexOwnerByControllerUID}); err != nil {
		return fmt.Errorf("replicaset: adding index %q: %w", ownerControllerUIDIndex, err)
	}
	return nil
}

// siblings lists the cached owners of type T that share o's controller, o
// included. An owner without a controller has none, as upstream finds none.
func siblings[T metav1.Object](indexer cache.Indexer, o metav1.Object) ([]T, error) {
	ref := metav1.GetControllerOfNoCopy(o)
	if ref == nil {
		return nil, nil
	}
	objs, err := indexer.ByIndex(ownerControllerUIDIndex, string(ref.UID))
	if err != nil {
		return nil, fmt.Errorf("listing owners controlled by %s: %w", ref.UID, err)
	}
	out := make([]T, 0, len(objs))
	for _, obj := range objs {
		if t, ok := obj.(T); ok {
			out = append(out, t)
		}
	}
	return out, nil
}
