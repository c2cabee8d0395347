package childset

import (
	"context"
	"fmt"
	"strings"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/internal/syncloop"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
	"github.com/ctrlkit/ctrlkit/workqueue"
)

// Controller is the client-go driver of the core: informer handlers that
// feed the expectations and fill a rate-limited work queue of owner keys,
// and workers that reconcile them and apply each Result.
type Controller[O Object, C Object] struct {
	reconciler *Reconciler[O, C]
	queue      *workqueue.RateLimitingQueue[string]
	loop       *syncloop.Loop
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
	opts = append([]Option{WithOwnerLister(ownersIn[O](ownerInformer.GetIndexer()))}, opts...)
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
		reconciler: r,
		queue:      workqueue.NewRateLimiting(limiter, qopts...),
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
	ownerReg, err := ownerInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueOwner,
		UpdateFunc: func(_, cur any) { c.enqueueOwner(cur) },
		DeleteFunc: c.ownerDeleted,
	})
	if err != nil {
		return nil, fmt.Errorf("childset: registering owner handlers: %w", err)
	}
	childReg, err := childInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.childAdded,
		UpdateFunc: c.childUpdated,
		DeleteFunc: c.childDeleted,
	})
	if err != nil {
		_ = ownerInformer.RemoveEventHandler(ownerReg)
		return nil, fmt.Errorf("childset: registering child handlers: %w", err)
	}
	c.loop.HasSynced = append([]cache.InformerSynced{ownerReg.HasSynced, childReg.HasSynced}, r.cfg.historySynced...)
	return c, nil
}

// Reconciler is the core the controller drives.
func (c *Controller[O, C]) Reconciler() *Reconciler[O, C] { return c.reconciler }

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

func (c *Controller[O, C]) enqueueOwner(obj any) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

func (c *Controller[O, C]) ownerDeleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if owner, ok := obj.(O); ok {
		c.reconciler.ObserveOwnerDelete(owner)
		c.enqueueOwner(owner)
	}
}

func (c *Controller[O, C]) childAdded(obj any) {
	if child, ok := obj.(C); ok {
		c.add(c.reconciler.ObserveAdd(child))
	}
}

func (c *Controller[O, C]) childUpdated(oldObj, curObj any) {
	old, ok1 := oldObj.(C)
	cur, ok2 := curObj.(C)
	if !ok1 || !ok2 || old.GetResourceVersion() == cur.GetResourceVersion() {
		return
	}
	c.add(c.reconciler.ObserveUpdate(old, cur))
}

func (c *Controller[O, C]) childDeleted(obj any) {
	tomb, unknown := obj.(cache.DeletedFinalStateUnknown)
	if unknown {
		obj = tomb.Obj
	}
	if child, ok := obj.(C); ok {
		c.add(c.reconciler.ObserveDelete(child, unknown))
	}
}

func (c *Controller[O, C]) add(keys []string) {
	for _, key := range keys {
		c.queue.Add(key)
	}
}

// ownersIn lists the owners of a namespace from the owner informer's
// indexer, for the Observe methods (WithOwnerLister).
func ownersIn[O Object](indexer cache.Indexer) func(namespace string) ([]O, error) {
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
