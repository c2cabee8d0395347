package childset

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/objectcontrol"
	"github.com/ctrlkit/ctrlkit/workqueue"
)

// Controller is the client-go driver of the core: informer handlers that
// feed the expectations and fill a rate-limited work queue of owner keys,
// and workers that reconcile them and apply each Result.
type Controller[O Object, C Object] struct {
	reconciler   *Reconciler[O, C]
	queue        *workqueue.RateLimitingQueue[string]
	ownerIndexer cache.Indexer
	hasSynced    []cache.InformerSynced
	workers      int
	started      atomic.Bool
	drainCh      chan struct{}
	drainOnce    sync.Once
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
	r := NewReconciler(spec, kind, writer, opts...)
	qopts := []workqueue.Option{workqueue.WithName(r.cfg.queueName), workqueue.WithMetricsProvider(r.cfg.metrics)}
	if r.cfg.metrics == nil {
		qopts = qopts[:1]
	}
	c := &Controller[O, C]{
		reconciler:   r,
		queue:        workqueue.NewRateLimiting[string](nil, qopts...),
		ownerIndexer: ownerInformer.GetIndexer(),
		workers:      r.cfg.workers,
		drainCh:      make(chan struct{}),
	}
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
	c.hasSynced = []cache.InformerSynced{ownerReg.HasSynced, childReg.HasSynced}
	return c, nil
}

// Reconciler is the core the controller drives.
func (c *Controller[O, C]) Reconciler() *Reconciler[O, C] { return c.reconciler }

// Run waits for the handlers to see the informers synced, then reconciles
// owners with the configured workers until ctx is done (queued owners are
// dropped, in-flight syncs see ctx cancelled) or Drain is called (queued
// owners are still synced; ctx still cuts it short). It shuts the queue
// down and returns nil once every goroutine it started has exited. It may
// be called once.
func (c *Controller[O, C]) Run(ctx context.Context) error {
	if !c.started.CompareAndSwap(false, true) {
		return errors.New("childset: Run called twice")
	}
	defer c.queue.ShutDown()
	waitCtx, cancelWait := context.WithCancel(ctx)
	defer cancelWait()
	go func() {
		select {
		case <-c.drainCh:
			cancelWait()
		case <-waitCtx.Done():
		}
	}()
	if !cache.WaitForCacheSync(waitCtx.Done(), c.hasSynced...) {
		return nil
	}
	workCtx, cancelWork := context.WithCancel(ctx)
	defer cancelWork()
	var wg sync.WaitGroup
	for range c.workers {
		wg.Go(func() {
			for c.processNext(workCtx) {
			}
		})
	}
	select {
	case <-ctx.Done():
		cancelWork()
		c.queue.ShutDown()
	case <-c.drainCh:
		if err := c.queue.ShutDownWithDrainContext(ctx); err != nil {
			klog.FromContext(ctx).Info("Drain cut short", "reason", err.Error())
		}
		cancelWork()
	}
	wg.Wait()
	return nil
}

// Drain asks Run to stop gracefully; it returns at once and may be called
// more than once.
func (c *Controller[O, C]) Drain() { c.drainOnce.Do(func() { close(c.drainCh) }) }

// processNext reconciles one key and applies its Result: a failure is
// retried with the queue's exponential backoff; success forgets the
// backoff and honours RequeueAfter. It reports whether to go on.
func (c *Controller[O, C]) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	res, err := c.reconciler.Reconcile(ctx, key)
	if err != nil {
		if ctx.Err() == nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Sync failed", "key", key)
		}
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	if res.RequeueAfter > 0 {
		c.queue.AddAfter(key, res.RequeueAfter)
	}
	return true
}

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
	child, ok := obj.(C)
	if !ok {
		return
	}
	if key := c.reconciler.ObserveAdd(child); key != "" {
		c.queue.Add(key)
		return
	}
	c.enqueueMatchingOwners(child)
}

func (c *Controller[O, C]) childUpdated(oldObj, curObj any) {
	old, ok1 := oldObj.(C)
	cur, ok2 := curObj.(C)
	if !ok1 || !ok2 || old.GetResourceVersion() == cur.GetResourceVersion() {
		return
	}
	for _, key := range c.reconciler.ObserveUpdate(old, cur) {
		c.queue.Add(key)
	}
	if c.reconciler.controllerOf(cur) == nil && cur.GetDeletionTimestamp() == nil {
		c.enqueueMatchingOwners(cur)
	}
}

func (c *Controller[O, C]) childDeleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if child, ok := obj.(C); ok {
		if key := c.reconciler.ObserveDelete(child); key != "" {
			c.queue.Add(key)
		}
	}
}

// enqueueMatchingOwners queues the owners of an orphan's namespace whose
// selector matches it: one of them may adopt it.
func (c *Controller[O, C]) enqueueMatchingOwners(child C) {
	objs, err := c.ownerIndexer.ByIndex(cache.NamespaceIndex, child.GetNamespace())
	if err != nil {
		// The owner informer has no namespace index: look at every owner.
		objs = c.ownerIndexer.List()
	}
	for _, obj := range objs {
		owner, ok := obj.(O)
		if !ok || owner.GetNamespace() != child.GetNamespace() {
			continue
		}
		sel, err := c.reconciler.spec.Selector(owner)
		if err != nil || sel == nil || sel.Empty() || !sel.Matches(labels.Set(child.GetLabels())) {
			continue
		}
		c.queue.Add(workKey(owner.GetNamespace(), owner.GetName()))
	}
}
