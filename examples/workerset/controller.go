package workerset

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/history"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// Controller is childset's client-go driver for WorkerSets and Workers.
type Controller = childset.Controller[*unstructured.Unstructured, *unstructured.Unstructured]

// NewController returns the WorkerSet controller: WorkerSets and Workers
// are read from informers of factory (which decides the namespace and the
// resync), Workers are written through client with merge patches for
// adoption and release. Call it before factory.Start, then Run the
// controller. A nil context, client or factory panics.
func NewController(ctx context.Context, client dynamic.Interface, factory dynamicinformer.DynamicSharedInformerFactory, opts ...Option) (*Controller, error) {
	switch {
	case ctx == nil:
		panic("workerset: NewController: nil context")
	case client == nil:
		panic("workerset: NewController: nil client")
	case factory == nil:
		panic("workerset: NewController: nil informer factory")
	}
	var cfg config
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	sets := factory.ForResource(SetResource).Informer()
	workers := factory.ForResource(WorkerResource).Informer()
	writer := objectcontrol.New("Worker", objectcontrol.DynamicWriter(client, WorkerResource),
		cfg.recorder, types.MergePatchType, cfg.controlOpts...)
	setOpts := append([]childset.Option{childset.WithEventRecorder(cfg.recorder)}, cfg.setOpts...)
	kind := Workers{childset.IndexerLister[*unstructured.Unstructured](workers.GetIndexer())}
	set := Set{Indexer: sets.GetIndexer()}
	var c *Controller
	var err error
	if cfg.revisions == nil {
		c, err = childset.New(sets, workers, set, kind, writer, setOpts...)
	} else {
		// Informer registers the revisions informer with its factory, so
		// the caller's Start starts it; Run waits for it to sync.
		revisions := cfg.revisions.Informer()
		setOpts = append(setOpts, childset.WithRevisions(history.NewHistory(cfg.client, cfg.revisions.Lister()), revisions.HasSynced))
		c, err = childset.New(sets, workers, NewRollingSet(set, client), kind, writer, setOpts...)
	}
	if err != nil {
		return nil, err
	}
	klog.FromContext(ctx).V(2).Info("WorkerSet controller ready to run", "owner", SetResource.String(), "children", WorkerResource.String())
	return c, nil
}
