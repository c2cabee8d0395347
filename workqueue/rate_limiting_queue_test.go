package workqueue

import (
	"k8s.io/utils/ptr"
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
	q.AddWithOpts(AddOpts{RateLimited: true, Priority: ptr.To(10)}, "urgent")
	c.Step(time.Second)
	waitLen(t, q.Queue, 2)
	item, prio, _ := q.GetWithPriority()
	assert.Equal(t, "urgent", item)
	assert.Equal(t, 10, prio)
}

func TestAddWithOptsRateLimitedNeedsALimiter(t *testing.T) {
	q := New[string]()
	defer q.ShutDown()
	assert.PanicsWithValue(t,
		"workqueue: AddWithOpts with RateLimited on a queue without a rate limiter; build it with NewRateLimiting",
		func() { q.AddWithOpts(AddOpts{RateLimited: true}, "a") })
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
