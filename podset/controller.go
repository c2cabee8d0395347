package podset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/internal/syncloop"
	"github.com/ctrlkit/ctrlkit/podcontrol"
	"github.com/ctrlkit/ctrlkit/workqueue"
)

// Controller is podset's client-go driver: the core (Reconciler) with
// informer handlers that fill a rate-limited work queue of owner keys, and
// workers that sync them and apply each Result. Build it with New, start
// the informers, then call Run.
type Controller[O childset.Object] struct {
	*Reconciler[O]

	client      kubernetes.Interface
	broadcaster record.EventBroadcaster // nil when the caller supplied the recorder
	queue       *workqueue.RateLimitingQueue[string]
	loop        *syncloop.Loop // Run's workers over queue

	// syncHandler is Reconcile; tests swap it to observe keys.
	syncHandler func(ctx context.Context, key string) (childset.Result, error)
}

// New returns a controller for owners described by kind: the core
// (NewReconciler) and a driver for it. It registers its event handlers and
// the pod-by-owner index (childset.AddControllerIndexer) on the informers; the
// caller starts the informers after this call and then calls Run.
// ownerInformer must hold objects of type O. Without WithEventRecorder,
// events go to a broadcaster of the controller's own, which Run starts and
// stops, writing through client.
func New[O childset.Object](ctx context.Context, client kubernetes.Interface, podInformer coreinformers.PodInformer, ownerInformer cache.SharedIndexInformer, kind Kind[O], opts ...Option) (*Controller[O], error) {
	cfg := newConfig(opts)
	if client == nil && ((cfg.podControl == nil && cfg.podWriter == nil) || !cfg.recorderSet) {
		return nil, errors.New("podset: New needs a client unless WithPodWriter (or WithPodControl) and WithEventRecorder are given")
	}
	c := &Controller[O]{client: client}
	if !cfg.recorderSet {
		if kind.GroupVersionKind().Kind == "" {
			return nil, errors.New("podset: the kind has an empty GroupVersionKind")
		}
		c.broadcaster = record.NewBroadcaster(record.WithContext(ctx))
		component := cfg.eventSource
		if component == "" {
			component = strings.ToLower(kind.GroupVersionKind().Kind) + "-controller"
		}
		opts = append(opts, WithEventRecorder(c.broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: component})))
	}
	if client != nil && cfg.podControl == nil && cfg.podWriter == nil {
		opts = append(opts, WithPodWriter(podcontrol.ClientsetWriter(client)))
	}
	opts = append(opts, func(c *config) { syncloop.Driven(&c.Options) })
	r, err := NewReconciler(ctx, podInformer, ownerInformer, kind, opts...)
	if err != nil {
		return nil, err
	}
	c.Reconciler = r
	cfg = *r.cfg
	name := cfg.QueueName
	if name == "" {
		name = strings.ToLower(r.gvk.Kind)
	}
	qopts := []workqueue.Option{workqueue.WithName(name)}
	if tc, ok := cfg.Clock.(clock.WithTicker); ok {
		qopts = append(qopts, workqueue.WithClock(tc))
	}
	if cfg.Metrics != nil {
		qopts = append(qopts, workqueue.WithMetricsProvider(cfg.Metrics))
	}
	limiter := workqueue.DefaultControllerRateLimiter[string]()
	c.queue = workqueue.NewRateLimiting(limiter, qopts...)
	podInf := podInformer.Informer()
	if _, err := ownerInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.OnOwnerAdd, UpdateFunc: c.OnOwnerUpdate, DeleteFunc: c.OnOwnerDelete,
	}); err != nil {
		return nil, fmt.Errorf("podset: registering %s handlers: %w", r.gvk.Kind, err)
	}
	if _, err := podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.OnPodAdd, UpdateFunc: c.OnPodUpdate, DeleteFunc: c.OnPodDelete,
	}); err != nil {
		return nil, fmt.Errorf("podset: registering pod handlers: %w", err)
	}
	c.syncHandler = c.Reconcile
	c.loop = &syncloop.Loop{
		Queue: c.queue, Limiter: limiter,
		Reconcile: func(ctx context.Context, key string) (time.Duration, error) {
			res, err := c.syncHandler(ctx, key)
			return res.RequeueAfter, err
		},
		HasSynced:    []cache.InformerSynced{podInf.HasSynced, ownerInformer.HasSynced},
		IsStaleCache: consistency.IsStaleCache,
		Name:         name,
	}
	cfg.Configure(c.loop)
	return c, nil
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
	logger.Info("Starting controller", "name", c.loop.Name, "workers", c.cfg.Workers, "burstReplicas", c.cfg.burst)
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

// HasSynced reports whether Run has seen the informer caches synced and its
// workers are running; it turns false again once a stop begins. Serve it as
// a readiness probe.
func (c *Controller[O]) HasSynced() bool { return c.loop.HasSyncedAndRunning() }

// Queue is the controller's work queue of "namespace/name" keys. Another
// framework driving the core may read it; the handlers fill it.
func (c *Controller[O]) Queue() workqueue.RateLimitingInterface[string] { return c.queue }

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
