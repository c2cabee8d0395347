package podset

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/childset"
)

// Reads is where the core reads pods and owners, for a host whose cache
// hands out no client-go informers (a controller-runtime cache restricted
// to namespaces keeps one per namespace): see NewCore. NewReconciler reads
// the informers' indexers instead.
type Reads[O childset.Object] struct {
	// Pods lists an owner's pods and its namespace's orphans (by the
	// controller index, childset.Lister) and gets a pod by name.
	Pods childset.Lister[*v1.Pod]
	// PodsMatching lists the pods of namespace that selector matches, as a
	// pod lister does: the related pods of a scale-down's ranking.
	PodsMatching func(namespace string, selector labels.Selector) ([]*v1.Pod, error)
	// Owners lists the owners of namespace, for the orphans' adopters.
	Owners func(namespace string) ([]O, error)
}

// informerReads reads the pod and owner informers' indexers; the pod
// indexer carries childset.ControllerIndex.
func informerReads[O childset.Object](pods, owners cache.Indexer) Reads[O] {
	return Reads[O]{
		Pods: childset.IndexerLister[*v1.Pod](pods),
		PodsMatching: func(namespace string, selector labels.Selector) ([]*v1.Pod, error) {
			var out []*v1.Pod
			err := cache.ListAllByNamespace(pods, namespace, selector, func(obj any) {
				if pod, ok := obj.(*v1.Pod); ok {
					out = append(out, pod)
				}
			})
			return out, err
		},
		Owners: childset.IndexerOwners[O](owners),
	}
}
