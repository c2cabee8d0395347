package podsetcr

import (
	"context"
	"fmt"

	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// sharedInformer returns the manager cache's informer for obj as the
// client-go SharedIndexInformer podset registers its handlers and index on.
// controller-runtime's informer cache hands out client-go's informers, so
// this is a type assertion; a cache that wraps them (a custom NewCache, a
// multi-cluster cache) is refused with an error saying so, rather than
// silently starting a second informer set.
func sharedInformer(ctx context.Context, c crcache.Informers, obj client.Object) (toolscache.SharedIndexInformer, error) {
	inf, err := c.GetInformer(ctx, obj)
	if err != nil {
		return nil, fmt.Errorf("podsetcr: informer for %T: %w", obj, err)
	}
	shared, ok := inf.(toolscache.SharedIndexInformer)
	if !ok {
		return nil, fmt.Errorf("podsetcr: the manager's cache gave a %T for %T, which is not a client-go SharedIndexInformer; podset needs the informer's indexer and store", inf, obj)
	}
	return shared, nil
}

// podInformer presents a pod SharedIndexInformer from the manager's cache
// as the client-go PodInformer podset.New takes.
type podInformer struct {
	informer toolscache.SharedIndexInformer
}

// Informer is the manager cache's pod informer itself.
func (p podInformer) Informer() toolscache.SharedIndexInformer { return p.informer }

// Lister lists pods from that informer's indexer.
func (p podInformer) Lister() corelisters.PodLister {
	return corelisters.NewPodLister(p.informer.GetIndexer())
}
