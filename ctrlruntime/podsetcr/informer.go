package podsetcr

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
	"github.com/ctrlkit/ctrlkit/podset"
)

// informerFor returns the manager cache's informer for obj, and the same as
// the client-go SharedIndexInformer podset reads best, or nil when the
// cache wraps its informers (one restricted to namespaces keeps one per
// namespace).
func informerFor(ctx context.Context, c crcache.Informers, obj client.Object) (crcache.Informer, toolscache.SharedIndexInformer, error) {
	inf, err := c.GetInformer(ctx, obj)
	if err != nil {
		return nil, nil, fmt.Errorf("podsetcr: informer for %T: %w", obj, err)
	}
	shared, _ := inf.(toolscache.SharedIndexInformer)
	return inf, shared, nil
}

// podInformer presents a pod SharedIndexInformer from the manager's cache
// as the client-go PodInformer podset.NewReconciler takes.
type podInformer struct {
	informer toolscache.SharedIndexInformer
}

// Informer is the manager cache's pod informer itself.
func (p podInformer) Informer() toolscache.SharedIndexInformer { return p.informer }

// Lister lists pods from that informer's indexer.
func (p podInformer) Lister() corelisters.PodLister {
	return corelisters.NewPodLister(p.informer.GetIndexer())
}

// cacheReads reads pods and owners through the manager's cache, for a cache
// that hands out no client-go informers: podset.NewCore's reads. The pods
// are listed by controller through childsetcr's field index, which it
// registers.
func cacheReads[O client.Object](ctx context.Context, mgr manager.Manager, gvk schema.GroupVersionKind) (podset.Reads[O], error) {
	if err := childsetcr.AddControllerIndex[*corev1.Pod](ctx, mgr.GetFieldIndexer()); err != nil {
		return podset.Reads[O]{}, fmt.Errorf("podsetcr: indexing pods by controller: %w", err)
	}
	pods, err := childsetcr.NewLister[*corev1.Pod](mgr.GetCache(), mgr.GetScheme())
	if err != nil {
		return podset.Reads[O]{}, err
	}
	owners, err := childsetcr.OwnerLister[O](mgr.GetCache(), mgr.GetScheme(), gvk)
	if err != nil {
		return podset.Reads[O]{}, err
	}
	cache := mgr.GetCache()
	// The cache's reads of a synced informer never block; podset's reads
	// have no context to pass.
	return podset.Reads[O]{
		Pods: pods,
		PodsMatching: func(namespace string, selector labels.Selector) ([]*corev1.Pod, error) {
			var list corev1.PodList
			if err := cache.List(context.Background(), &list, client.InNamespace(namespace),
				client.MatchingLabelsSelector{Selector: selector}); err != nil {
				return nil, fmt.Errorf("podsetcr: listing pods: %w", err)
			}
			out := make([]*corev1.Pod, len(list.Items))
			for i := range list.Items {
				out[i] = &list.Items[i]
			}
			return out, nil
		},
		Owners: owners,
	}, nil
}
