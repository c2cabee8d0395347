package workqueue

import (
	"math"
	"sync"
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

// DefaultMaxTrackedItems caps how many items a per-item limiter remembers,
// so a caller that never calls Forget cannot grow memory without bound
// (kubernetes#138743). When the cap is reached an arbitrary other item's
// history is dropped: that item restarts its backoff at the base delay,
// which is the safe direction to err in.
const DefaultMaxTrackedItems = 1 << 16

// LimiterOption configures the per-item limiters.
type LimiterOption func(*limiterConfig)

type limiterConfig struct{ maxTracked int }

// WithMaxTrackedItems sets the per-item history cap. Zero or less keeps
// DefaultMaxTrackedItems.
func WithMaxTrackedItems(n int) LimiterOption {
	return func(c *limiterConfig) {
		if n > 0 {
			c.maxTracked = n
		}
	}
}

func newLimiterConfig(opts []LimiterOption) limiterConfig {
	c := limiterConfig{maxTracked: DefaultMaxTrackedItems}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// failures is a capped per-item counter map shared by the per-item limiters.
type failures[T comparable] struct {
	mu  sync.Mutex
	m   map[T]int
	max int
}

// incr returns the count before this failure and records one more.
func (f *failures[T]) incr(item T) int {
	n, ok := f.m[item]
	if !ok && len(f.m) >= f.max {
		for k := range f.m {
			delete(f.m, k)
			break
		}
	}
	f.m[item] = n + 1
	return n
}

func (f *failures[T]) get(item T) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[item]
}

func (f *failures[T]) forget(item T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, item)
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
		f:         failures[T]{m: make(map[T]int), max: c.maxTracked},
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
	r.f.mu.Lock()
	exp := r.f.incr(item)
	r.f.mu.Unlock()
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

// NewItemFastSlowRateLimiter returns a fast/slow limiter.
func NewItemFastSlowRateLimiter[T comparable](fast, slow time.Duration, maxFast int, opts ...LimiterOption) *ItemFastSlowRateLimiter[T] {
	c := newLimiterConfig(opts)
	return &ItemFastSlowRateLimiter[T]{
		f:         failures[T]{m: make(map[T]int), max: c.maxTracked},
		fastDelay: fast, slowDelay: slow, maxFastAttempts: maxFast,
	}
}

// When implements RateLimiter.
func (r *ItemFastSlowRateLimiter[T]) When(item T) time.Duration {
	r.f.mu.Lock()
	n := r.f.incr(item) + 1
	r.f.mu.Unlock()
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

// NewMaxOfRateLimiter combines limiters; nil entries are skipped.
func NewMaxOfRateLimiter[T comparable](limiters ...RateLimiter[T]) *MaxOfRateLimiter[T] {
	ls := make([]RateLimiter[T], 0, len(limiters))
	for _, l := range limiters {
		if l != nil {
			ls = append(ls, l)
		}
	}
	return &MaxOfRateLimiter[T]{limiters: ls}
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
	if r == nil || r.Limiter == nil {
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

// NewWithMaxWaitRateLimiter caps rl's delays at maxDelay. A nil rl never
// delays.
func NewWithMaxWaitRateLimiter[T comparable](rl RateLimiter[T], maxDelay time.Duration) *WithMaxWaitRateLimiter[T] {
	return &WithMaxWaitRateLimiter[T]{limiter: rl, maxDelay: maxDelay}
}

// When implements RateLimiter.
func (w *WithMaxWaitRateLimiter[T]) When(item T) time.Duration {
	if w.limiter == nil {
		return 0
	}
	return min(w.limiter.When(item), w.maxDelay)
}

// NumRequeues implements RateLimiter.
func (w *WithMaxWaitRateLimiter[T]) NumRequeues(item T) int {
	if w.limiter == nil {
		return 0
	}
	return w.limiter.NumRequeues(item)
}

// Forget implements RateLimiter.
func (w *WithMaxWaitRateLimiter[T]) Forget(item T) {
	if w.limiter != nil {
		w.limiter.Forget(item)
	}
}

// DefaultControllerRateLimiter is client-go's default: the slower of a
// per-item exponential backoff from 5 ms to 1000 s and a shared bucket of
// 10 qps with a burst of 100.
func DefaultControllerRateLimiter[T comparable]() RateLimiter[T] {
	return NewMaxOfRateLimiter[T](
		NewItemExponentialFailureRateLimiter[T](5*time.Millisecond, 1000*time.Second),
		&BucketRateLimiter[T]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}
