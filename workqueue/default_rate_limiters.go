package workqueue

import (
	"fmt"
	"math"
	"time"

	"golang.org/x/time/rate"
)

// RateLimiter decides how long an item waits before its next retry; it is
// client-go's TypedRateLimiter.
type RateLimiter[T comparable] interface {
	// When records a failure of item and returns how long it should wait.
	When(item T) time.Duration
	// Forget clears the item's failure history.
	Forget(item T)
	// NumRequeues returns the failures recorded for item.
	NumRequeues(item T) int
}

// ItemExponentialFailureRateLimiter waits base·2^failures, capped at max.
type ItemExponentialFailureRateLimiter[T comparable] struct {
	f         failures[T]
	baseDelay time.Duration
	maxDelay  time.Duration
}

// NewItemExponentialFailureRateLimiter returns a limiter whose n-th
// consecutive failure of an item waits base·2^(n-1), never more than max.
// Non-positive delays are allowed and mean "retry now".
func NewItemExponentialFailureRateLimiter[T comparable](base, max time.Duration, opts ...LimiterOption) *ItemExponentialFailureRateLimiter[T] {
	c := newLimiterConfig(opts)
	return &ItemExponentialFailureRateLimiter[T]{
		f:         newFailures[T](c.maxTracked),
		baseDelay: base,
		maxDelay:  max,
	}
}

// DefaultItemBasedRateLimiter is exponential from 1 ms to 1000 s, as client-go.
func DefaultItemBasedRateLimiter[T comparable]() *ItemExponentialFailureRateLimiter[T] {
	return NewItemExponentialFailureRateLimiter[T](time.Millisecond, 1000*time.Second)
}

// When implements RateLimiter.
func (r *ItemExponentialFailureRateLimiter[T]) When(item T) time.Duration {
	exp := r.f.incr(item)
	// Computed in floating point so a large exponent saturates to max
	// instead of wrapping around.
	backoff := float64(r.baseDelay.Nanoseconds()) * math.Pow(2, float64(exp))
	if backoff > math.MaxInt64 || time.Duration(backoff) > r.maxDelay {
		return r.maxDelay
	}
	return time.Duration(backoff)
}

// NumRequeues implements RateLimiter.
func (r *ItemExponentialFailureRateLimiter[T]) NumRequeues(item T) int { return r.f.get(item) }

// Forget implements RateLimiter.
func (r *ItemExponentialFailureRateLimiter[T]) Forget(item T) { r.f.forget(item) }

// ItemFastSlowRateLimiter waits fast for the first maxFast failures of an
// item and slow afterwards.
type ItemFastSlowRateLimiter[T comparable] struct {
	f                    failures[T]
	fastDelay, slowDelay time.Duration
	maxFastAttempts      int
}

// NewItemFastSlowRateLimiter returns a limiter that waits fast for the first
// maxFast failures of an item and slow afterwards.
func NewItemFastSlowRateLimiter[T comparable](fast, slow time.Duration, maxFast int, opts ...LimiterOption) *ItemFastSlowRateLimiter[T] {
	c := newLimiterConfig(opts)
	return &ItemFastSlowRateLimiter[T]{
		f:         newFailures[T](c.maxTracked),
		fastDelay: fast, slowDelay: slow, maxFastAttempts: maxFast,
	}
}

// When implements RateLimiter.
func (r *ItemFastSlowRateLimiter[T]) When(item T) time.Duration {
	n := r.f.incr(item) + 1
	if n <= r.maxFastAttempts {
		return r.fastDelay
	}
	return r.slowDelay
}

// NumRequeues implements RateLimiter.
func (r *ItemFastSlowRateLimiter[T]) NumRequeues(item T) int { return r.f.get(item) }

// Forget implements RateLimiter.
func (r *ItemFastSlowRateLimiter[T]) Forget(item T) { r.f.forget(item) }

// MaxOfRateLimiter asks every limiter (each records the failure) and waits
// the longest answer.
type MaxOfRateLimiter[T comparable] struct {
	limiters []RateLimiter[T]
}

// NewMaxOfRateLimiter combines limiters. A nil limiter is a programmer error
// and panics here rather than at the first retry.
func NewMaxOfRateLimiter[T comparable](limiters ...RateLimiter[T]) *MaxOfRateLimiter[T] {
	for i, l := range limiters {
		if l == nil {
			panic(fmt.Sprintf("workqueue: NewMaxOfRateLimiter: limiter %d is nil", i))
		}
	}
	return &MaxOfRateLimiter[T]{limiters: limiters}
}

// When implements RateLimiter.
func (r *MaxOfRateLimiter[T]) When(item T) time.Duration {
	var d time.Duration
	for _, l := range r.limiters {
		d = max(d, l.When(item))
	}
	return d
}

// NumRequeues implements RateLimiter.
func (r *MaxOfRateLimiter[T]) NumRequeues(item T) int {
	n := 0
	for _, l := range r.limiters {
		n = max(n, l.NumRequeues(item))
	}
	return n
}

// Forget implements RateLimiter.
func (r *MaxOfRateLimiter[T]) Forget(item T) {
	for _, l := range r.limiters {
		l.Forget(item)
	}
}

// BucketRateLimiter spaces all items through one token bucket. It keeps no
// per-item state, so Forget does nothing. Each When books a token, so a
// burst of N items waits up to N/rate (kubernetes#104554); wrap it in
// NewWithMaxWaitRateLimiter to cap that. A nil Limiter never delays.
type BucketRateLimiter[T comparable] struct {
	*rate.Limiter
}

// When implements RateLimiter.
func (r *BucketRateLimiter[T]) When(T) time.Duration {
	if r.Limiter == nil {
		return 0
	}
	return r.Reserve().Delay()
}

// NumRequeues implements RateLimiter; the bucket tracks no items.
func (r *BucketRateLimiter[T]) NumRequeues(T) int { return 0 }

// Forget implements RateLimiter; the bucket tracks no items.
func (r *BucketRateLimiter[T]) Forget(T) {}

// WithMaxWaitRateLimiter caps another limiter's delay.
type WithMaxWaitRateLimiter[T comparable] struct {
	limiter  RateLimiter[T]
	maxDelay time.Duration
}

// NewWithMaxWaitRateLimiter caps rl's delays at maxDelay. A nil rl is a
// programmer error and panics here rather than at the first retry.
func NewWithMaxWaitRateLimiter[T comparable](rl RateLimiter[T], maxDelay time.Duration) *WithMaxWaitRateLimiter[T] {
	if rl == nil {
		panic("workqueue: NewWithMaxWaitRateLimiter: nil rate limiter")
	}
	return &WithMaxWaitRateLimiter[T]{limiter: rl, maxDelay: maxDelay}
}

// When implements RateLimiter.
func (w *WithMaxWaitRateLimiter[T]) When(item T) time.Duration {
	return min(w.limiter.When(item), w.maxDelay)
}

// NumRequeues implements RateLimiter.
func (w *WithMaxWaitRateLimiter[T]) NumRequeues(item T) int {
	return w.limiter.NumRequeues(item)
}

// Forget implements RateLimiter.
func (w *WithMaxWaitRateLimiter[T]) Forget(item T) { w.limiter.Forget(item) }

// DefaultControllerRateLimiter is client-go's default: the slower of a
// per-item exponential backoff from 5 ms to 1000 s and a shared bucket of
// 10 qps with a burst of 100.
func DefaultControllerRateLimiter[T comparable]() RateLimiter[T] {
	return NewMaxOfRateLimiter[T](
		NewItemExponentialFailureRateLimiter[T](5*time.Millisecond, 1000*time.Second),
		&BucketRateLimiter[T]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}
