package workqueue

import (
	"math"
	"time"
)

// AddOpts says how AddWithOpts adds its items. It has the fields, in the
// same order and with the same types, and the meaning of controller-runtime's
// priorityqueue.AddOpts, so an adapter converts one into the other with a
// plain type conversion: workqueue.AddOpts(o).
type AddOpts struct {
	// After delays the items; zero or less adds them now.
	After time.Duration
	// RateLimited delays each item by the queue's rate limiter, which records
	// a failure of it. With After as well, the shorter of the two delays
	// wins. Only a queue built by NewRateLimiting has a limiter; setting
	// RateLimited on any other queue is a programmer error and panics.
	RateLimited bool
	// Priority is the items' priority; higher is handed out first. nil means
	// DefaultPriority.
	Priority *int
}

// AddWithOpts adds items with a delay, a rate-limited delay and a priority,
// under one lock. An item already in the queue keeps the higher of its two
// priorities and the sooner of its two ready times, as in controller-runtime:
// an item that is ready stays ready, and an item that waits is pulled
// forward by an earlier deadline or an immediate add (kubernetes#126027).
// An item being processed is queued again after Done. Each delayed add
// counts as a retry in the metrics. Adds after shutdown are ignored.
func (q *Queue[T]) AddWithOpts(opts AddOpts, items ...T) {
	if opts.RateLimited && q.limiter == nil {
		panic("workqueue: AddWithOpts with RateLimited on a queue without a rate limiter; build it with NewRateLimiting")
	}
	p := int32(DefaultPriority)
	if opts.Priority != nil {
		p = clampPriority(*opts.Priority)
	}
	q.lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	for _, item := range items {
		d := opts.After
		if opts.RateLimited {
			// The limiter has its own lock and never calls back into the
			// queue, so asking it under the queue's lock is safe.
			rd := q.limiter.When(item)
			if d == 0 || rd < d {
				d = rd
			}
		}
		if d <= 0 {
			q.addLocked(item, p)
			continue
		}
		if q.m != nil {
			q.m.retries.Inc()
		}
		q.addAfterLocked(item, d, p, false)
	}
}

// clampPriority maps an int priority onto the stored int32 range.
func clampPriority(p int) int32 {
	return int32(max(min(p, math.MaxInt32), math.MinInt32))
}
