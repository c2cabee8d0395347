package replicaset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/podcontrol"
	"github.com/ctrlkit/ctrlkit/workqueue"
)

// Controller keeps the pods of ReplicaSets (NewReplicaSetController) or of
// ReplicationControllers (NewReplicationManager) at their desired count. Both
// constructors return this same type: the kind-specific parts live in a small
// adapter and the sync loop is shared.
type Controller struct {
	kind   kind
	client kubernetes.Interface
	cfg    config

	podControl   podcontrol.PodControl
	recorder     record.EventRecorder
	broadcaster  record.EventBroadcaster // nil when the caller supplied the recorder
	expectations expectationsCache
	queue        *workqueue.RateLimitingQueue[string]

	podIndexer cache.Indexer
	podLister  corelisters.PodLister
	hasSynced  []cache.InformerSynced

	// syncHandler is the sync function; tests swap it to observe keys.
	syncHandler func(ctx context.Context, key string) error
	// candidatePods returns the pods a sync considers; podsForOwner, or the
	// upstream-style namespace scan in the benchmark's baseline.
	candidatePods func(o owner) ([]*v1.Pod, error)

	started    atomic.Bool
	synced     atomic.Bool
	hasWorkers atomic.Bool
}

// expectationsCache is the part of expectations.UIDTrackingControllerExpectations
// the controller uses; an interface so tests can observe the gate.
type expectationsCache interface {
	SatisfiedExpectations(key string) bool
	DeleteExpectations(key string)
	ExpectCreations(key string, adds int) error
	ExpectDeletions(key string, deletedKeys []string) error
	CreationObserved(key string)
	DeletionObserved(key, deleteKey string)
	LowerExpectations(key string, add, del int)
	GetExpectations(key string) (*expectations.ControlleeExpectations, bool, error)
}

// NewReplicaSetController returns a controller for apps/v1 ReplicaSets. It
// registers its event handlers and the pod index it needs on the informers;
// the caller starts the informer factory after this call and then calls Run.
func NewReplicaSetController(ctx context.Context, client kubernetes.Interface, podInformer coreinformers.PodInformer, rsInformer appsinformers.ReplicaSetInformer, opts ...Option) (*Controller, error) {
	if client == nil || podInformer == nil || rsInformer == nil {
		return nil, errors.New("replicaset: NewReplicaSetController needs a client, a pod informer and a ReplicaSet informer")
	}
	return newController(ctx, client, podInformer, newReplicaSetKind(client, rsInformer), opts)
}

// NewReplicationManager returns a controller for core/v1
// ReplicationControllers, running the same core as NewReplicaSetController.
func NewReplicationManager(ctx context.Context, client kubernetes.Interface, podInformer coreinformers.PodInformer, rcInformer coreinformers.ReplicationControllerInformer, opts ...Option) (*Controller, error) {
	if client == nil || podInformer == nil || rcInformer == nil {
		return nil, errors.New("replicaset: NewReplicationManager needs a client, a pod informer and a ReplicationController informer")
	}
	return newController(ctx, client, podInformer, newReplicationControllerKind(client, rcInformer), opts)
}

func newController(ctx context.Context, client kubernetes.Interface, podInformer coreinformers.PodInformer, k kind, opts []Option) (*Controller, error) {
	if ctx == nil {
		return nil, errors.New("replicaset: nil context")
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	queueName, component := k.names()
	c := &Controller{kind: k, client: client, cfg: cfg, recorder: cfg.recorder}
	if c.recorder == nil {
		c.broadcaster = record.NewBroadcaster(record.WithContext(ctx))
		c.recorder = c.broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: component})
	}
	c.podControl = cfg.podControl
	if c.podControl == nil {
		c.podControl = podcontrol.NewRealPodControl(client, c.recorder)
	}
	c.expectations = expectations.NewUIDTrackingControllerExpectations(expectations.NewControllerExpectations(
		expectations.WithClock(cfg.clock),
		expectations.WithLogger(klog.FromContext(ctx)),
	))
	qopts := []workqueue.Option{workqueue.WithName(queueName)}
	if tc, ok := cfg.clock.(clock.WithTicker); ok {
		qopts = append(qopts, workqueue.WithClock(tc))
	}
	if cfg.metrics != nil {
		qopts = append(qopts, workqueue.WithMetricsProvider(cfg.metrics))
	}
	c.queue = workqueue.NewRateLimiting(workqueue.DefaultControllerRateLimiter[string](), qopts...)

	ownerInf := k.ownerInformer()
	if err := addOwnerIndex(ownerInf); err != nil {
		return nil, fmt.Errorf("replicaset: %w", err)
	}
	podInf := podInformer.Informer()
	if err := addPodIndex(podInf); err != nil {
		return nil, fmt.Errorf("replicaset: %w", err)
	}
	logger := klog.FromContext(ctx)
	if _, err := ownerInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.addOwner(logger, obj) },
		UpdateFunc: func(old, cur any) { c.updateOwner(logger, old, cur) },
		DeleteFunc: func(obj any) { c.deleteOwner(logger, obj) },
	}); err != nil {
		return nil, fmt.Errorf("replicaset: registering %s handlers: %w", k.groupVersionKind().Kind, err)
	}
	if _, err := podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.addPod(logger, obj) },
		UpdateFunc: func(old, cur any) { c.updatePod(logger, old, cur) },
		DeleteFunc: func(obj any) { c.deletePod(logger, obj) },
	}); err != nil {
		return nil, fmt.Errorf("replicaset: registering pod handlers: %w", err)
	}
	c.podIndexer = podInf.GetIndexer()
	c.podLister = podInformer.Lister()
	c.hasSynced = []cache.InformerSynced{podInf.HasSynced, ownerInf.HasSynced}
	c.syncHandler = c.sync
	c.candidatePods = c.podsForOwner
	return c, nil
}

// Run waits for the informer caches, runs the configured number of workers
// until ctx is done, then drains the queue: owners already queued are still
// synced, for at most the drain timeout (WithDrainTimeout). It returns nil
// once every goroutine it started has exited. Run may be called only once.
func (c *Controller) Run(ctx context.Context) error {
	if c == nil || ctx == nil {
		return errors.New("replicaset: Run needs a controller built by its constructor and a context")
	}
	if !c.started.CompareAndSwap(false, true) {
		return errors.New("replicaset: Run called twice")
	}
	logger := klog.FromContext(ctx)
	name := strings.ToLower(c.kind.groupVersionKind().Kind)
	if c.broadcaster != nil {
		c.broadcaster.StartStructuredLogging(3)
		c.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.client.CoreV1().Events("")})
		defer c.broadcaster.Shutdown()
	}
	logger.Info("Starting controller", "name", name, "workers", c.cfg.workers, "burstReplicas", c.cfg.burst)
	defer logger.Info("Shut down controller", "name", name)

	// Syncs run on a context that outlives ctx by the drain timeout, so that
	// a shutdown finishes the work in hand instead of failing it midway.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()

	var wg sync.WaitGroup
	if cache.WaitForNamedCacheSyncWithContext(ctx, c.hasSynced...) {
		c.synced.Store(true)
		c.hasWorkers.Store(true)
		for range c.cfg.workers {
			wg.Go(func() {
				for c.processNextWorkItem(workCtx) {
				}
			})
		}
	}
	<-ctx.Done()
	c.synced.Store(false)
	if !c.hasWorkers.Load() {
		// Nobody would hand the queued keys out: there is nothing to drain.
		c.queue.ShutDown()
		return nil
	}
	logger.Info("Draining the work queue", "name", name, "queued", c.queue.Len(), "timeout", c.cfg.drainTimeout)
	drainCtx, cancelDrain := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.drainTimeout)
	if err := c.queue.ShutDownWithDrainContext(drainCtx); err != nil {
		// Workers still pull the remaining keys, and fail them fast now.
		logger.Info("Drain timed out; cancelling in-flight syncs", "name", name)
	}
	cancelDrain()
	cancelWork()
	wg.Wait()
	return nil
}

// HasSynced reports whether Run has seen the informer caches synced and its
// workers are running; it turns false again once shutdown begins. The example
// binary serves it as /readyz.
func (c *Controller) HasSynced() bool { return c != nil && c.synced.Load() }

// processNextWorkItem syncs one key and reports whether the worker should go
// on. Success forgets the key's backoff; failure requeues it rate-limited.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	err := c.syncHandler(ctx, key)
	if err == nil {
		c.queue.Forget(key)
		return true
	}
	utilruntime.HandleErrorWithContext(ctx, err, "Sync failed", "kind", c.kind.groupVersionKind().Kind, "key", key)
	c.queue.AddRateLimited(key)
	return true
}

// ownerKey is the work queue key of an owner: "namespace/name".
func ownerKey(o owner) string { return o.GetNamespace() + "/" + o.GetName() }

func (c *Controller) enqueue(o owner) { c.queue.Add(ownerKey(o)) }

func (c *Controller) enqueueAfter(o owner, d time.Duration) { c.queue.AddAfter(ownerKey(o), d) }
