package workqueue

// RateLimitingInterface is DelayingInterface plus rate-limited retries:
// client-go's TypedRateLimitingInterface.
type RateLimitingInterface[T comparable] interface {
	DelayingInterface[T]
	AddRateLimited(item T)
	Forget(item T)
	NumRequeues(item T) int
}

// RateLimitingQueue is a Queue whose retries are spaced by a RateLimiter.
type RateLimitingQueue[T comparable] struct {
	*Queue[T]
}

// NewRateLimiting returns a queue that delays AddRateLimited (and
// AddWithOpts with RateLimited set) by rl. A nil rl means
// DefaultControllerRateLimiter, client-go's choice. Remember to call Forget
// when an item succeeds: it resets the item's backoff (limiters also cap what
// they keep).
func NewRateLimiting[T comparable](rl RateLimiter[T], opts ...Option) *RateLimitingQueue[T] {
	if rl == nil {
		rl = DefaultControllerRateLimiter[T]()
	}
	q := New[T](opts...)
	q.limiter = rl
	return &RateLimitingQueue[T]{Queue: q}
}

// AddRateLimited adds item after the delay the rate limiter decides.
func (q *RateLimitingQueue[T]) AddRateLimited(item T) {
	q.AddAfter(item, q.limiter.When(item))
}

// Forget resets the item's backoff. It does not remove the item from the
// queue and does not replace Done.
func (q *RateLimitingQueue[T]) Forget(item T) { q.limiter.Forget(item) }

// NumRequeues returns how many times the item was rate limited since its
// last Forget.
func (q *RateLimitingQueue[T]) NumRequeues(item T) int { return q.limiter.NumRequeues(item) }
