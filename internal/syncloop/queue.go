package syncloop

import (
	"context"
	"time"
)

// Queue is what the loop needs of its work queue; ctrlkit's
// *workqueue.RateLimitingQueue[string] has it. The loop names the methods
// rather than the type so that this internal package depends on no
// feature package.
type Queue interface {
	Get() (key string, shutdown bool)
	Done(key string)
	Forget(key string)
	AddAfter(key string, delay time.Duration)
	AddRateLimited(key string)
	Len() int
	ShutDown()
	ShutDownWithDrainContext(ctx context.Context) error
}

// Limiter is what the loop reads of the queue's rate limiter: the delay
// of a key's next failure retry.
type Limiter interface {
	When(key string) time.Duration
}
