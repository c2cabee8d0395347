package workqueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	cgworkqueue "k8s.io/client-go/util/workqueue"
	testingclock "k8s.io/utils/clock/testing"
)

func TestRateLimitingQueue(t *testing.T) {
	c := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
	q := NewRateLimiting[string](NewItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second), WithClock(c))
	defer q.ShutDown()
	deadline := func(item string) time.Duration {
		at, ok := q.Deadline(item)
		assert.True(t, ok)
		return at.Sub(c.Now())
	}

	q.AddRateLimited("one")
	assert.Equal(t, time.Millisecond, deadline("one"))
	q.AddRateLimited("one") // earlier deadline kept
	assert.Equal(t, time.Millisecond, deadline("one"))
	assert.Equal(t, 2, q.NumRequeues("one"))

	q.AddRateLimited("two")
	assert.Equal(t, time.Millisecond, deadline("two"))
	q.Forget("one")
	assert.Equal(t, 0, q.NumRequeues("one"))
	assert.Equal(t, 2, q.NumWaiting(), "Forget does not dequeue")

	c.Step(time.Millisecond)
	waitLen(t, q.Queue, 2)
	item, _ := q.Get()
	q.Done(item)
	q.Forget(item)
	q.AddRateLimited(item)
	assert.Equal(t, time.Millisecond, deadline(item))
}

func TestRateLimitingQueueKeepsPriority(t *testing.T) {
	c := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
	q := NewRateLimiting[string](NewItemExponentialFailureRateLimiter[string](time.Second, time.Second), WithClock(c))
	defer q.ShutDown()
	q.Add("normal")
	q.AddRateLimitedWithPriority("urgent", 10)
	c.Step(time.Second)
	waitLen(t, q.Queue, 2)
	item, prio, _ := q.GetWithPriority()
	assert.Equal(t, "urgent", item)
	assert.Equal(t, 10, prio)
}

func TestRateLimitingQueueNilLimiter(t *testing.T) {
	q := NewRateLimiting[string](nil)
	defer q.ShutDown()
	q.AddRateLimited("a")
	assert.Equal(t, 1, q.NumWaiting(), "default limiter: first retry waits 5ms")
	assert.Equal(t, 1, q.NumRequeues("a"))
}

// A client-go limiter and a client-go consumer both work with the queue.
func TestRateLimitingQueueClientGoInterop(t *testing.T) {
	var q cgworkqueue.TypedRateLimitingInterface[string] = NewRateLimiting[string](
		cgworkqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Hour, time.Hour))
	defer q.ShutDown()
	q.Add("x")
	item, _ := q.Get()
	q.AddRateLimited(item)
	q.Done(item)
	assert.Equal(t, 1, q.NumRequeues("x"))
	assert.Equal(t, 0, q.Len())
}
