package replicaset

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/workqueue"
)

// Controller keeps the pods of ReplicaSets (NewReplicaSetController) or of
// ReplicationControllers (NewReplicationManager) at their desired count: a
// podset.Controller over the kind's adapter. Both constructors return this
// one type, which has the driver's methods and the core's pod-side ones.
type Controller struct {
	engine
}

// engine is the method set of podset.Controller[O] free of O, so that one
// Controller type serves both kinds: the driver's and the core's pod-side
// methods.
type engine interface {
	Run(ctx context.Context) error
	Drain()
	HasSynced() bool
	Queue() workqueue.RateLimitingInterface[string]
	ProcessNextWorkItem(ctx context.Context) bool
	Reconcile(ctx context.Context, key string) (childset.Result, error)
	Expectations() *expectations.UIDTrackingControllerExpectations
	ObserveAdd(pod *v1.Pod) []string
	ObserveUpdate(old, cur *v1.Pod) []string
	ObserveDelete(pod *v1.Pod, finalStateUnknown bool) []string
	OwnerEventHandler() cache.ResourceEventHandler
	ChildEventHandler() cache.ResourceEventHandler
}

var (
	_ engine = (*podset.Controller[*appsv1.ReplicaSet])(nil)
	_ engine = (*podset.Controller[*v1.ReplicationController])(nil)
)

// NewReplicaSetController returns a controller for apps/v1 ReplicaSets. It
// registers its event handlers and the indexes it needs on the informers;
// the caller starts the informer factory after this call and then calls Run.
func NewReplicaSetController(ctx context.Context, client kubernetes.Interface, podInformer coreinformers.PodInformer, rsInformer appsinformers.ReplicaSetInformer, opts ...Option) (*Controller, error) {
	kind, err := NewReplicaSetKind(client, rsInformer)
	if err != nil {
		return nil, err
	}
	opts = append([]Option{podset.WithQueueName(ReplicaSets.QueueName()), podset.WithEventSource(ReplicaSets.EventSource())}, opts...)
	c, err := podset.New(ctx, client, podInformer, rsInformer.Informer(), kind, opts...)
	if err != nil {
		return nil, fmt.Errorf("replicaset: %w", err)
	}
	return &Controller{c}, nil
}

// NewReplicationManager returns a controller for core/v1
// ReplicationControllers, running the same core as NewReplicaSetController.
// As upstream's ReplicationManager, it has no read-your-writes guard unless
// podset.WithReadYourWrites is given one (over the pod and
// ReplicationController informers' stores), and never writes
// terminatingReplicas.
func NewReplicationManager(ctx context.Context, client kubernetes.Interface, podInformer coreinformers.PodInformer, rcInformer coreinformers.ReplicationControllerInformer, opts ...Option) (*Controller, error) {
	kind, err := NewReplicationControllerKind(client, rcInformer)
	if err != nil {
		return nil, err
	}
	opts = append([]Option{
		podset.WithQueueName(ReplicationControllers.QueueName()),
		podset.WithEventSource(ReplicationControllers.EventSource()),
		podset.WithReadYourWrites(nil),
	}, opts...)
	c, err := podset.New(ctx, client, podInformer, rcInformer.Informer(), kind, opts...)
	if err != nil {
		return nil, fmt.Errorf("replicaset: %w", err)
	}
	return &Controller{c}, nil
}

// Run runs the controller; see podset.Controller.Run for its two stops:
// ctx done stops at once, Drain stops gracefully.
func (c *Controller) Run(ctx context.Context) error {
	return c.engine.Run(ctx)
}

// HasSynced reports whether the caches are synced and workers run; the
// example binary serves it as /readyz.
func (c *Controller) HasSynced() bool { return c.engine.HasSynced() }
