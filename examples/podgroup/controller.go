package podgroup

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/podset"
)

// Controller is podset's controller for PodGroups.
type Controller = podset.Controller[*unstructured.Unstructured]

// New returns a PodGroup controller: pods are written through client and
// read from podInformer; PodGroups are read from groupInformer (a dynamic
// informer for Resource) and their status written through dyn. Start both
// informers after this call, then call Run.
func New(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface, podInformer coreinformers.PodInformer, groupInformer cache.SharedIndexInformer, opts ...podset.Option) (*Controller, error) {
	kind := NewKind(dyn, groupInformer.GetIndexer())
	return podset.New(ctx, client, podInformer, groupInformer, podset.Kind[*unstructured.Unstructured](kind), opts...)
}
