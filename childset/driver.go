package childset

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/internal/ownerkey"
	"github.com/ctrlkit/ctrlkit/internal/syncloop"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
	"github.com/ctrlkit/ctrlkit/workqueue"
)

// Controller is the client-go driver of the core, the one every kind runs
// on (pods too: podset.New returns it): informer handlers that feed the
// core's Observe methods and fill a rate-limited work queue of the owner
// keys they return, and workers that reconcile them and apply each Result.
// It has the core's methods (Reconcile, the Observe methods,
// Expectations), for tests and for code that feeds it events of its own.
type Controller[O Object, C Object] struct {
	*Reconciler[O, C]

	queue  *workqueue.RateLimitingQueue[string]
	loop   *syncloop.Loop
	events *eventSink // nil unless WithEventBroadcaster
	// ownerEvents and childEvents are the handlers New registers.
	ownerEvents, childEvents cache.ResourceEventHandler
}

// New returns a controller for owners from ownerInformer and children from
// childInformer, which it registers its handlers on and whose store the
// Spec and Kind should read. It also registers ControllerIndex on
// childInformer (for IndexerLister), so call it before the informers start.
// The nil checks and option panics are NewReconciler's.
func New[O Object, C Object](ownerInformer, childInformer cache.SharedIndexInformer, spec Spec[O, C], kind Kind[C], writer objectcontrol.Interface[C], opts ...Option) (*Controller[O, C], error) {
	if ownerInformer == nil || childInformer == nil {
		panic("childset: New: nil informer")
	}
	// The owner informer lists the adopters of an orphan, unless opts
	// give a lister of their own.
	opts = append([]Option{WithOwnerLister(IndexerOwners[O](ownerInformer.GetIndexer()))}, opts...)
	r := NewReconciler(spec, kind, writer, append(opts, func(c *config) { syncloop.Driven(&c.Options) })...)
	name := r.cfg.QueueName
	if name == "" {
		name = strings.ToLower(r.gvk.Kind)
	}
	qopts := []workqueue.Option{workqueue.WithName(name)}
	if r.cfg.Metrics != nil {
		qopts = append(qopts, workqueue.WithMetricsProvider(r.cfg.Metrics))
	}
	if tc, ok := r.cfg.Clock.(clock.WithTicker); ok {
		// The queue's delays run on the core's clock, as the Results
		// that ask for them are computed on it.
		qopts = append(qopts, workqueue.WithClock(tc))
	}
	limiter := workqueue.DefaultControllerRateLimiter[string]()
	c := &Controller[O, C]{
		Reconciler: r,
		queue:      workqueue.NewRateLimiting(limiter, qopts...),
		events:     r.cfg.events,
	}
	c.loop = &syncloop.Loop{
		Queue: c.queue, Limiter: limiter,
		Reconcile: func(ctx context.Context, key string) (time.Duration, error) {
			res, err := r.Reconcile(ctx, key)
			return res.RequeueAfter, err
		},
		IsStaleCache: consistency.IsStaleCache,
		Name:         name,
	}
	r.cfg.Configure(c.loop)
	if err := AddControllerIndexer(childInformer); err != nil {
		return nil, err
	}
	c.ownerEvents = cache.ResourceEventHandlerFuncs{AddFunc: c.enqueueOwner, UpdateFunc: c.ownerUpdated, DeleteFunc: c.ownerDeleted}
	c.childEvents = cache.ResourceEventHandlerFuncs{AddFunc: c.childAdded, UpdateFunc: c.childUpdated, DeleteFunc: c.childDeleted}
	ownerReg, err := ownerInformer.AddEventHandler(c.ownerEvents)
	if err != nil {
		return nil, fmt.Errorf("childset: registering owner handlers: %w", err)
	}
	childReg, err := childInformer.AddEventHandler(c.childEvents)
	if err != nil {
		_ = ownerInformer.RemoveEventHandler(ownerReg)
		return nil, fmt.Errorf("childset: registering child handlers: %w", err)
	}
	c.loop.HasSynced = append([]cache.InformerSynced{ownerReg.HasSynced, childReg.HasSynced}, r.cfg.historySynced...)
	if r.cfg.claims != nil {
		c.loop.HasSynced = append(c.loop.HasSynced, r.cfg.claims.synced...)
	}
	return c, nil
}

// Run waits for the handlers to see the informers synced, then reconciles
// owners with the configured workers until ctx is done (queued owners are
// dropped, in-flight syncs see ctx cancelled) or Drain is called (queued
// owners are still synced, for at most the drain timeout; ctx still cuts
// it short). A failed sync is retried with the queue's exponential backoff,
// capped (WithUnreachableBackoffCap) when the API server could not be
// reached; an owner held by the read-your-writes guard is polled
// (WithStaleCachePoll); a successful sync honours Result.RequeueAfter. Run
// shuts the queue down and returns nil once every goroutine it started has
// exited. It may be called once.
func (c *Controller[O, C]) Run(ctx context.Context) error {
	if e := c.events; e != nil {
		e.broadcaster.StartStructuredLogging(3)
		e.broadcaster.StartRecordingToSink(e.sink)
		defer e.broadcaster.Shutdown()
	}
	logger := klog.FromContext(ctx)
	logger.Info("Starting controller", "name", c.loop.Name, "workers", c.cfg.Workers, "burstReplicas", c.cfg.burst)
	defer logger.Info("Shut down controller", "name", c.loop.Name)
	if err := c.loop.Run(ctx); err != nil {
		return fmt.Errorf("childset: %w", err)
	}
	return nil
}

// Drain asks Run to stop gracefully; it returns at once and may be called
// more than once.
func (c *Controller[O, C]) Drain() { c.loop.Drain() }

// HasSynced reports whether Run has seen the caches synced and its workers
// are running; serve it as a readiness probe.
func (c *Controller[O, C]) HasSynced() bool { return c.loop.HasSyncedAndRunning() }

// OwnerEventHandler and ChildEventHandler are the handlers New registered
// on the owner and child informers: the Observe methods, with the
// informer's tombstones unwrapped and objects of other types ignored,
// applied to the queue. A test feeds them events as an informer would.
func (c *Controller[O, C]) OwnerEventHandler() cache.ResourceEventHandler { return c.ownerEvents }

// ChildEventHandler: see OwnerEventHandler.
func (c *Controller[O, C]) ChildEventHandler() cache.ResourceEventHandler { return c.childEvents }

// ProcessNextWorkItem is one step of a Run worker: it takes a key from the
// queue, reconciles it, puts it back as the Result or the error says, and
// reports whether to go on (false once the queue is shut down). A caller
// running workers of its own loops on it; a test steps the driver with it.
func (c *Controller[O, C]) ProcessNextWorkItem(ctx context.Context) bool {
	return c.loop.ProcessNext(ctx)
}

// Queue is the controller's work queue of "namespace/name" owner keys,
// for code that queues owners the informers say nothing about (a shard
// gained, a periodic sweep). Run's workers take keys from it.
func (c *Controller[O, C]) Queue() workqueue.RateLimitingInterface[string] { return c.queue }

// The handlers pass over anything but an O or a C, a nil one included,
// as an informer of another type (or a test) may hand them.

func (c *Controller[O, C]) enqueueOwner(obj any) {
	if owner, ok := obj.(O); ok && !isNil(owner) {
		c.queue.Add(ownerkey.Join(owner.GetNamespace(), owner.GetName(), ""))
	}
}

func (c *Controller[O, C]) ownerUpdated(oldObj, curObj any) {
	old, ok1 := oldObj.(O)
	cur, ok2 := curObj.(O)
	if ok1 && ok2 && !isNil(old) && !isNil(cur) {
		c.add(c.ObserveOwnerUpdate(old, cur))
	}
}

func (c *Controller[O, C]) ownerDeleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if owner, ok := obj.(O); ok && !isNil(owner) {
		c.ObserveOwnerDelete(owner)
		c.queue.Add(ownerkey.Join(owner.GetNamespace(), owner.GetName(), ""))
	}
}

func (c *Controller[O, C]) childAdded(obj any) {
	if child, ok := obj.(C); ok && !isNil(child) {
		c.add(c.ObserveAdd(child))
	}
}

func (c *Controller[O, C]) childUpdated(oldObj, curObj any) {
	old, ok1 := oldObj.(C)
	cur, ok2 := curObj.(C)
	if ok1 && ok2 && !isNil(old) && !isNil(cur) {
		c.add(c.ObserveUpdate(old, cur))
	}
}

func (c *Controller[O, C]) childDeleted(obj any) {
	tomb, unknown := obj.(cache.DeletedFinalStateUnknown)
	if unknown {
		obj = tomb.Obj
	}
	if child, ok := obj.(C); ok && !isNil(child) {
		c.add(c.ObserveDelete(child, unknown))
	}
}

func (c *Controller[O, C]) add(keys []string) {
	for _, key := range keys {
		c.queue.Add(key)
	}
}

// IndexerOwners lists the owners of a namespace from an owner informer's
// indexer, by its namespace index if it has one, for WithOwnerLister;
// New's driver lists them so. Anything in the indexer but an O, a nil one
// included, is passed over.
func IndexerOwners[O Object](indexer cache.Indexer) func(namespace string) ([]O, error) {
	return func(namespace string) ([]O, error) {
		objs, err := indexer.ByIndex(cache.NamespaceIndex, namespace)
		if err != nil {
			// The owner informer has no namespace index: look at every owner.
			objs = indexer.List()
		}
		owners := make([]O, 0, len(objs))
		for _, obj := range objs {
			if owner, ok := obj.(O); ok && !isNil(owner) && owner.GetNamespace() == namespace {
				owners = append(owners, owner)
			}
		}
		return owners, nil
	}
}
