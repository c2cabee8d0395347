package podset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/internal/syncloop"
	"github.com/ctrlkit/ctrlkit/internal/unsure"
	"github.com/ctrlkit/ctrlkit/podcontrol"
	"github.com/ctrlkit/ctrlkit/workqueue"
)

// Controller keeps the pods of every owner of type O at the owner's desired
// count, with upstream's ReplicaSet semantics. Build it with New, start the
// informers, then call Run; or drive Sync and the On* handlers from another
// framework.
type Controller[O metav1.Object] struct {
	kind     Kind[O]
	siblings SiblingLister[O] // nil when kind does not list siblings
	gvk      schema.GroupVersionKind
	client   kubernetes.Interface
	cfg      config
	logger   klog.Logger

	podControl   deadlinePodControl // every pod write within the write timeout
	recorder     record.EventRecorder
	broadcaster  record.EventBroadcaster // nil when the caller supplied the recorder
	expectations expectationsCache
	uidExp       *expectations.UIDTrackingControllerExpectations
	// unsure holds the pod creates and deletes whose outcome is unknown
	// (objectcontrol.OutcomeUnknown) until a sync resolves them.
	unsure  *unsure.Registry[*v1.PodTemplateSpec]
	guard   *consistency.Guard // nil when WithReadYourWrites(false)
	ownerGR schema.GroupResource
	queue   *workqueue.RateLimitingQueue[string]
	loop    *syncloop.Loop // Run's workers over queue

	podIndexer   cache.Indexer
	podLister    corelisters.PodLister
	ownerIndexer cache.Indexer
	claimMemos   claimMemos

	// syncHandler is Reconcile; tests swap it to observe keys.
	syncHandler func(ctx context.Context, key string) (childset.Result, error)
}

// podGroupResource names pods to the read-your-writes guard.
var podGroupResource = schema.GroupResource{Resource: "pods"}

// New returns a controller for owners described by kind. It registers its
// event handlers and the pod-by-owner index (AddPodControllerIndexer) on the
// informers; the caller starts the informers after this call and then calls
// Run. ownerInformer must hold objects of type O.
func New[O metav1.Object](ctx context.Context, client kubernetes.Interface, podInformer coreinformers.PodInformer, ownerInformer cache.SharedIndexInformer, kind Kind[O], opts ...Option) (*Controller[O], error) {
	var zero O
	if _, ok := any(zero).(runtime.Object); !ok {
		return nil, fmt.Errorf("podset: owner type %T is not a runtime.Object", zero)
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	// The client writes pods and events; with both a pod writer (or pod
	// control) and an event recorder supplied, nothing is left for it to do.
	if client == nil && ((cfg.podControl == nil && cfg.podWriter == nil) || cfg.recorder == nil) {
		return nil, errors.New("podset: New needs a client unless WithPodWriter (or WithPodControl) and WithEventRecorder are given")
	}
	gvk := kind.GroupVersionKind()
	if gvk.Kind == "" {
		return nil, errors.New("podset: the kind has an empty GroupVersionKind")
	}
	lower := strings.ToLower(gvk.Kind)
	if cfg.queueName == "" {
		cfg.queueName, cfg.component = lower, lower+"-controller"
	}
	// The guard keys stores and names them in its errors by resource; the
	// guessed plural is right for every usual kind name.
	ownerGVR, _ := meta.UnsafeGuessKindToResource(gvk)
	logger := klog.FromContext(ctx)
	c := &Controller[O]{
		kind: kind, gvk: gvk, client: client, cfg: cfg, logger: logger,
		recorder: cfg.recorder,
		ownerGR:  ownerGVR.GroupResource(),
	}
	c.siblings, _ = kind.(SiblingLister[O])
	if c.recorder == nil {
		c.broadcaster = record.NewBroadcaster(record.WithContext(ctx))
		c.recorder = c.broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: cfg.component})
	}
	podInf := podInformer.Informer()
	if cfg.readYourWrites {
		c.guard = newGuard(cfg, logger, podInf, ownerInformer, c.ownerGR)
	}
	pc := cfg.podControl
	if pc == nil {
		writer := cfg.podWriter
		if writer == nil {
			writer = podcontrol.ClientsetWriter(client)
		}
		if c.guard != nil {
			// The core learns of its own pod writes from the writer it
			// writes through, so the guard sees every one, whoever built
			// the writer.
			writer = childset.RecordingWriter[*v1.Pod]{
				Writer: writer, Guard: c.guard, Resource: podGroupResource,
				Enabled: func() bool { return c.cfg.gates(StaleControllerConsistencyReplicaSet) },
			}
		}
		// The control bounds its writes by the same timeout, which the
		// deadline below already imposes, so it adds no second one.
		pc = podcontrol.NewPodControl(writer, c.recorder, podcontrol.WithWriteTimeout(cfg.writeTimeout))
	}
	// Every pod write of a sync gets the write timeout, and the sync stops
	// waiting for it then even if the pod control ignores its context.
	c.podControl = deadlinePodControl{pc: pc, timeout: cfg.writeTimeout}
	c.uidExp = expectations.NewUIDTrackingControllerExpectations(expectations.NewControllerExpectations(
		expectations.WithClock(cfg.clock),
		expectations.WithLogger(logger),
	))
	c.expectations = c.uidExp
	c.unsure = unsure.New[*v1.PodTemplateSpec](expectations.ExpectationsTimeout, cfg.clock)
	qopts := []workqueue.Option{workqueue.WithName(cfg.queueName)}
	if tc, ok := cfg.clock.(clock.WithTicker); ok {
		qopts = append(qopts, workqueue.WithClock(tc))
	}
	if cfg.metrics != nil {
		qopts = append(qopts, workqueue.WithMetricsProvider(cfg.metrics))
	}
	limiter := workqueue.DefaultControllerRateLimiter[string]()
	c.queue = workqueue.NewRateLimiting(limiter, qopts...)

	if err := AddPodControllerIndexer(podInf); err != nil {
		return nil, fmt.Errorf("podset: %w", err)
	}
	if !cfg.noHandlers {
		if _, err := ownerInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: c.OnOwnerAdd, UpdateFunc: c.OnOwnerUpdate, DeleteFunc: c.OnOwnerDelete,
		}); err != nil {
			return nil, fmt.Errorf("podset: registering %s handlers: %w", gvk.Kind, err)
		}
		if _, err := podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: c.OnPodAdd, UpdateFunc: c.OnPodUpdate, DeleteFunc: c.OnPodDelete,
		}); err != nil {
			return nil, fmt.Errorf("podset: registering pod handlers: %w", err)
		}
	}
	c.podIndexer = podInf.GetIndexer()
	c.podLister = podInformer.Lister()
	c.ownerIndexer = ownerInformer.GetIndexer()
	c.syncHandler = c.Reconcile
	c.loop = &syncloop.Loop{
		Queue: c.queue, Limiter: limiter, Workers: cfg.workers,
		Reconcile: func(ctx context.Context, key string) (time.Duration, error) {
			res, err := c.syncHandler(ctx, key)
			return res.RequeueAfter, err
		},
		HasSynced:             []cache.InformerSynced{podInf.HasSynced, ownerInformer.HasSynced},
		IsStaleCache:          consistency.IsStaleCache,
		StaleCachePoll:        cfg.staleCachePoll,
		UnreachableBackoffCap: cfg.unreachableBackoffCap,
		DrainTimeout:          cfg.drainTimeout,
		Clock:                 cfg.clock,
		Name:                  lower,
	}
	if m := cfg.syncMetrics; m != nil {
		c.loop.Observe = func(_ string, took time.Duration, err error) { m.ObserveSync(gvk.Kind, took, err) }
	}
	return c, nil
}

// newGuard builds the read-your-writes guard over the two informer stores,
// those that report the resource version they have applied (client-go v0.36
// on). With neither there is nothing to guard, and nil means no guard: the
// controller then never asks about StaleControllerConsistencyReplicaSet, a
// gate that Kubernetes registries before 1.36 do not know (and a registry
// panics on a name it does not know). Libraries and registry come from the
// same Kubernetes release, so stores that report a version imply a registry
// that knows the gate.
func newGuard(cfg config, logger klog.Logger, podInf, ownerInf cache.SharedIndexInformer, ownerGR schema.GroupResource) *consistency.Guard {
	opts := []consistency.Option{consistency.WithClock(cfg.clock), consistency.WithLogger(logger)}
	if cfg.readYourWritesTTL > 0 {
		opts = append(opts, consistency.WithTTL(cfg.readYourWritesTTL))
	}
	if s, ok := podInf.GetStore().(consistency.SyncedResourceVersioner); ok {
		opts = append(opts, consistency.WithStore(podGroupResource, s))
	}
	if s, ok := ownerInf.GetStore().(consistency.SyncedResourceVersioner); ok {
		opts = append(opts, consistency.WithStore(ownerGR, s))
	}
	if _, ok := podInf.GetStore().(consistency.SyncedResourceVersioner); !ok {
		if _, ok := ownerInf.GetStore().(consistency.SyncedResourceVersioner); !ok {
			return nil
		}
	}
	return consistency.NewGuard(opts...)
}

// Run waits for the informer caches, then syncs owners with the configured
// number of workers until one of two stops:
//
//   - ctx is done: stop now. In-flight syncs see their context cancelled,
//     queued owners are dropped, and Run returns once every worker has
//     exited. This is the stop for a lost leader lease, where another
//     instance may already be writing.
//   - Drain was called: stop gracefully. No new work is accepted, owners
//     already queued are still synced, for at most the drain timeout
//     (WithDrainTimeout), after which in-flight syncs are cancelled. A
//     cancelled ctx during the drain cuts it short at once.
//
// An unsuccessful sync is retried by why it failed: an owner held by the
// read-your-writes guard is polled at a short fixed interval
// (WithStaleCachePoll), a failure caused by an unreachable API server backs
// off no longer than a cap (WithUnreachableBackoffCap), and any other
// failure backs off exponentially, as upstream.
//
// Run returns nil once every goroutine it started has exited. It may be
// called only once.
func (c *Controller[O]) Run(ctx context.Context) error {
	if c.broadcaster != nil {
		c.broadcaster.StartStructuredLogging(3)
		c.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.client.CoreV1().Events("")})
		defer c.broadcaster.Shutdown()
	}
	logger := klog.FromContext(ctx)
	logger.Info("Starting controller", "name", c.loop.Name, "workers", c.cfg.workers, "burstReplicas", c.cfg.burst)
	defer logger.Info("Shut down controller", "name", c.loop.Name)
	if err := c.loop.Run(ctx); err != nil {
		return fmt.Errorf("podset: %w", err)
	}
	return nil
}

// Drain asks Run to stop gracefully (see Run). It returns at once; Run
// returns when the drain is over. Calling it more than once, or before Run,
// is safe: a Run that has not synced its caches yet returns at once.
func (c *Controller[O]) Drain() { c.loop.Drain() }

// Workers is the number of owners synced at once (WithWorkers), for a host
// that runs its own workers.
func (c *Controller[O]) Workers() int { return c.cfg.workers }

// StaleCachePoll is how soon an owner held by the read-your-writes guard
// is to be looked at again (WithStaleCachePoll), for a host that applies
// Reconcile's results itself.
func (c *Controller[O]) StaleCachePoll() time.Duration { return c.cfg.staleCachePoll }

// HasSynced reports whether Run has seen the informer caches synced and its
// workers are running; it turns false again once a stop begins. Serve it as
// a readiness probe.
func (c *Controller[O]) HasSynced() bool { return c.loop.HasSyncedAndRunning() }

// Queue is the controller's work queue of "namespace/name" keys. Another
// framework driving the core may read it; the handlers fill it.
func (c *Controller[O]) Queue() workqueue.RateLimitingInterface[string] { return c.queue }

// Expectations is the controller's expectations cache, keyed by
// expectations.OwnerKey. It is exposed for frameworks that observe pod
// events themselves and for tests.
func (c *Controller[O]) Expectations() *expectations.UIDTrackingControllerExpectations {
	return c.uidExp
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

// Sync is Reconcile for a caller without a driver of its own: it queues
// the key again on the controller's own queue when the Result asks for it,
// as Run's workers do, and returns the error.
func (c *Controller[O]) Sync(ctx context.Context, key string) error {
	res, err := c.Reconcile(ctx, key)
	if res.RequeueAfter > 0 {
		c.queue.AddAfter(key, res.RequeueAfter)
	}
	return err
}

// ProcessNextWorkItem takes one key from the queue, syncs it and reports
// whether a worker should go on (false once the queue is shut down); the
// key is put back as Run's workers put it back. Callers running their own
// workers may loop on it.
func (c *Controller[O]) ProcessNextWorkItem(ctx context.Context) bool {
	return c.loop.ProcessNext(ctx)
}

// ownerKey is the work queue key of an owner.
func ownerKey(o metav1.Object) string {
	return workqueue.Key(o.GetNamespace(), o.GetName())
}

// The informer handlers New registers: the Observe methods (handlers.go)
// applied to the controller's own queue.

// OnOwnerAdd is ObserveOwnerAdd on the controller's queue.
func (c *Controller[O]) OnOwnerAdd(obj any) { c.enqueue(c.ObserveOwnerAdd(obj)) }

// OnOwnerUpdate is ObserveOwnerUpdate on the controller's queue.
func (c *Controller[O]) OnOwnerUpdate(oldObj, curObj any) {
	c.enqueue(c.ObserveOwnerUpdate(oldObj, curObj))
}

// OnOwnerDelete is ObserveOwnerDelete on the controller's queue.
func (c *Controller[O]) OnOwnerDelete(obj any) { c.enqueue(c.ObserveOwnerDelete(obj)) }

// OnPodAdd is ObservePodAdd on the controller's queue.
func (c *Controller[O]) OnPodAdd(obj any) { c.enqueue(c.ObservePodAdd(obj)) }

// OnPodUpdate is ObservePodUpdate on the controller's queue.
func (c *Controller[O]) OnPodUpdate(oldObj, curObj any) {
	c.enqueue(c.ObservePodUpdate(oldObj, curObj))
}

// OnPodDelete is ObservePodDelete on the controller's queue.
func (c *Controller[O]) OnPodDelete(obj any) { c.enqueue(c.ObservePodDelete(obj)) }

func (c *Controller[O]) enqueue(keys []string) {
	for _, key := range keys {
		c.queue.Add(key)
	}
}

// object returns o as the runtime.Object that events and pod control need;
// New checked that O is one.
func object[O metav1.Object](o O) runtime.Object { return any(o).(runtime.Object) }
