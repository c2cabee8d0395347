package ctrlruntime

import (
	"sync"
	"time"

	cgworkqueue "k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/workqueue"
)

// Queue is ctrlkit's rate-limiting priority queue presented as
// controller-runtime's priorityqueue.PriorityQueue. controller-runtime
// checks for that interface when it builds a controller's queue: a queue
// that has it is used as is, so the priorities its handlers set (low for the
// initial list and for resyncs) and the priority a Result asks for reach the
// queue; any other queue is wrapped and every priority is dropped.
type Queue[T comparable] struct {
	*workqueue.RateLimitingQueue[T]
}

var _ priorityqueue.PriorityQueue[reconcile.Request] = (*Queue[reconcile.Request])(nil)

// Default delays for AddRateLimited when controller-runtime passes no rate
// limiter: those of its own priority queue.
const (
	defaultBaseDelay = 5 * time.Millisecond
	defaultMaxDelay  = 1000 * time.Second
)

// NewQueue is for controller.Options.NewQueue: it returns ctrlkit's queue
// for the controller, named after it, publishing controller-runtime's
// standard workqueue metrics on the manager's metrics endpoint:
//
//	ctrl.NewControllerManagedBy(mgr).
//		For(&v1.MyKind{}).
//		WithOptions(controller.Options{NewQueue: ctrlruntime.NewQueue}).
//		Complete(r)
func NewQueue(controllerName string, rateLimiter cgworkqueue.TypedRateLimiter[reconcile.Request]) cgworkqueue.TypedRateLimitingInterface[reconcile.Request] {
	return NewTypedQueue(controllerName, rateLimiter)
}

// NewQueueFunc returns a NewQueue for controllers of any request type whose
// queues take extra ctrlkit options, applied after the defaults: for example
// workqueue.WithAgeing(0) for strict priorities as in controller-runtime, or
// workqueue.WithMetricsProvider(p) for another registry.
func NewQueueFunc[T comparable](opts ...workqueue.Option) func(string, cgworkqueue.TypedRateLimiter[T]) cgworkqueue.TypedRateLimitingInterface[T] {
	return func(controllerName string, rateLimiter cgworkqueue.TypedRateLimiter[T]) cgworkqueue.TypedRateLimitingInterface[T] {
		return NewTypedQueue(controllerName, rateLimiter, opts...)
	}
}

// NewTypedQueue returns the queue of controller controllerName. rateLimiter
// spaces AddRateLimited; nil means controller-runtime's priority-queue
// default (per item, 5ms doubling up to 1000s). The queue's metrics go to
// DefaultMetricsProvider unless opts set another provider; if that provider
// cannot be built the error is logged once and the queue runs without
// metrics.
func NewTypedQueue[T comparable](controllerName string, rateLimiter cgworkqueue.TypedRateLimiter[T], opts ...workqueue.Option) *Queue[T] {
	var limiter workqueue.RateLimiter[T] = rateLimiter
	if rateLimiter == nil {
		limiter = workqueue.NewItemExponentialFailureRateLimiter[T](defaultBaseDelay, defaultMaxDelay)
	}
	all := make([]workqueue.Option, 0, len(opts)+2)
	all = append(all, workqueue.WithName(controllerName))
	if p, err := DefaultMetricsProvider(); err != nil {
		logMetricsErrorOnce(err)
	} else {
		all = append(all, workqueue.WithMetricsProvider(p))
	}
	all = append(all, opts...)
	return &Queue[T]{RateLimitingQueue: workqueue.NewRateLimiting(limiter, all...)}
}

// AddWithOpts adds items with controller-runtime's options: a nil Priority
// is the default priority 0, After delays the items, and RateLimited delays
// them by the rate limiter, the shorter of the two delays winning. An item
// already queued keeps the higher priority and the earlier time, as in
// controller-runtime's queue.
func (q *Queue[T]) AddWithOpts(o priorityqueue.AddOpts, items ...T) {
	q.RateLimitingQueue.AddWithOpts(workqueue.AddOpts(o), items...)
}

var logMetricsError sync.Once

func logMetricsErrorOnce(err error) {
	logMetricsError.Do(func() {
		logf.Log.WithName("ctrlruntime").Error(err, "workqueue metrics disabled: cannot share controller-runtime's collectors")
	})
}
