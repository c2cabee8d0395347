package gang

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/history"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// Controller is childset's client-go driver for Gangs and their pods.
type Controller = childset.Controller[*unstructured.Unstructured, *v1.Pod]

// NewController returns the Gang controller, in childset's indexed mode:
// pods are named <gang>-<index>, the lowest missing index is created first
// and the highest is deleted first. Gangs are read from an informer of
// gangs (a dynamic informer factory, which decides the namespace), pods from
// pods and written through client. Call it before the factories start,
// then Run the controller. A nil context, client or informer panics.
func NewController(ctx context.Context, client kubernetes.Interface, pods coreinformers.PodInformer, gangs dynamicinformer.DynamicSharedInformerFactory, opts ...Option) (*Controller, error) {
	switch {
	case ctx == nil:
		panic("gang: NewController: nil context")
	case client == nil:
		panic("gang: NewController: nil client")
	case pods == nil || gangs == nil:
		panic("gang: NewController: nil informer")
	}
	var cfg config
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	gangInformer := gangs.ForResource(Resource).Informer()
	podInformer := pods.Informer()
	writer := objectcontrol.New("pod", objectcontrol.TypedWriter(func(ns string) objectcontrol.TypedClient[*v1.Pod] {
		return client.CoreV1().Pods(ns)
	}), cfg.recorder, types.StrategicMergePatchType, cfg.controlOpts...)
	setOpts := append([]childset.Option{childset.WithIndexedNames(nil), childset.WithEventRecorder(cfg.recorder)}, cfg.setOpts...)
	kind := Pods{childset.IndexerLister[*v1.Pod](podInformer.GetIndexer())}
	gangsSpec := Gangs{Indexer: gangInformer.GetIndexer()}
	var c *Controller
	var err error
	if cfg.revisions == nil {
		c, err = childset.New(gangInformer, podInformer, gangsSpec, kind, writer, setOpts...)
	} else {
		// Informer registers the revisions informer with its factory, so
		// the caller's Start starts it; Run waits for it to sync.
		revisions := cfg.revisions.Informer()
		setOpts = append(setOpts, childset.WithRevisions(history.NewHistory(client, cfg.revisions.Lister()), revisions.HasSynced))
		c, err = childset.New(gangInformer, podInformer, NewRollingGangs(gangsSpec, cfg.dyn), kind, writer, setOpts...)
	}
	if err != nil {
		return nil, err
	}
	klog.FromContext(ctx).V(2).Info("Gang controller ready to run", "owner", Resource.String())
	return c, nil
}
