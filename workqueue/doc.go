// Package workqueue is a generic work queue for controllers: items waiting
// to be processed, a guarantee that no two workers hold the same item, and
// delayed adds, rate-limited retries, rate limiters, priorities and metrics.
//
// It keeps the semantics of k8s.io/client-go/util/workqueue: repeated Adds
// of a queued item collapse into one; an item added while it is processed
// runs exactly once more after Done; Get keeps returning queued items after
// shutdown and Add after shutdown is ignored; AddAfter keeps the earlier of
// two deadlines; the rate limiters use client-go's formulas and defaults; and
// the seven metrics keep client-go's names and meanings. RateLimitingQueue
// satisfies client-go's TypedRateLimitingInterface and every limiter
// satisfies TypedRateLimiter, so the queue drops into client-go and
// controller-runtime code, and WithMetricsProvider takes client-go's
// MetricsProvider. Nothing is global: metrics are per queue.
//
// How it differs from upstream. One mutex guards everything, including the
// delay heap, and one record per item replaces client-go's separate sets and
// metric maps, so a cycle costs less and allocates nothing in steady state.
// A queue has at most one goroutine, started only for delays or metrics.
//
// Upstream bugs fixed, each pinned by a test named after it:
//   - Add, or AddAfter(0), while the item waits for a deadline makes it ready
//     now and it runs once (kubernetes#126027).
//   - A later AddAfter never postpones an earlier one; Reschedule does so on
//     request (client-go#131).
//   - A Done without a matching Get is ignored and never duplicates an item
//     (kubernetes#79934).
//   - ShutDownWithDrain waits for queued as well as in-flight items, on its
//     own condition variable (kubernetes#141079); ShutDownWithDrainContext
//     bounds the wait.
//   - ShutDown and ShutDownWithDrain return with no goroutine of the queue
//     left running (kubernetes#134323).
//   - AddAfter never blocks (client-go blocks once 1000 adds are pending) and
//     never starts a goroutine per item.
//   - Delayed items are visible: NumWaiting, Deadline, and a waiting-depth
//     gauge for providers implementing WaitingMetricsProvider
//     (crossplane-runtime#674).
//   - Per-item limiter state is capped (DefaultMaxTrackedItems) and released
//     by Forget (kubernetes#138743).
//
// Beyond upstream:
//   - Priorities (AddWithPriority, AddAfterWithPriority, GetWithPriority):
//     higher first, FIFO within a priority; a re-added item keeps the higher
//     priority and the earlier deadline. The plain API uses DefaultPriority.
//   - Ageing (WithAgeing, DefaultAgeing): a ready item that waited longer than
//     the ageing period is served before higher priorities, oldest first, so
//     low priorities cannot starve (controller-runtime#3496).
//   - GetContext stops a blocked worker without shutting the queue down
//     (kubernetes#91800).
//
// ParallelizeUntil runs pieces of work on a bounded number of goroutines, as
// client-go's does, and re-raises a piece's panic on the caller.
//
// Not provided: client-go's pluggable Queue[T] store.
package workqueue
