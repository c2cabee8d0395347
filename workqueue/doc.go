// Package workqueue is a generic work queue for controllers: items waiting
// to be processed, a guarantee that no two workers hold the same item, and
// delayed adds, rate-limited retries, priorities and metrics.
//
// It keeps the semantics of k8s.io/client-go/util/workqueue: repeated Adds
// of a queued item collapse into one; an item added while it is processed
// runs exactly once more after Done; Get keeps returning queued items after
// shutdown and Add after shutdown is ignored; AddAfter keeps the earlier of
// two deadlines; the rate limiters use client-go's formulas and defaults; the
// seven metrics keep client-go's names and meanings. RateLimitingQueue
// satisfies client-go's TypedRateLimitingInterface, every limiter satisfies
// TypedRateLimiter, and WithMetricsProvider takes client-go's
// MetricsProvider, per queue (nothing is global). The prommetrics
// subpackage is such a provider for Prometheus.
//
// A typical controller builds one queue and runs a few workers on it:
//
//	q := workqueue.NewRateLimiting(workqueue.DefaultControllerRateLimiter[string](),
//		workqueue.WithName("replicaset"))
//	defer q.ShutDown()
//	for key, quit := q.Get(); !quit; key, quit = q.Get() {
//		if err := sync(ctx, key); err != nil {
//			q.AddRateLimited(key)
//		} else {
//			q.Forget(key)
//		}
//		q.Done(key)
//	}
//
// AddWithOpts adds items with a delay, a rate-limited delay and a priority in
// one call, with the fields and merge rules of controller-runtime's priority
// queue; GetWithPriority reports the priority an item was handed out at.
// Higher priorities are served first and FIFO order holds within one; an
// item that waited longer than the ageing period (WithAgeing) is served
// ahead of higher priorities, so low priorities cannot starve.
//
// KeyFunc and NoResyncPeriodFunc are upstream pkg/controller's helpers for
// the keys a queue holds and the informers that feed it.
//
// Options are checked when they are built: a value with no meaning, such as
// a negative ageing period, is a programmer error and panics there with a
// message naming the option.
package workqueue
