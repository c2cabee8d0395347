package workqueue

import (
	"context"
	"k8s.io/utils/ptr"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// kubernetes#126027: Add while the item waits for an AddAfter deadline
// makes it ready now, and it runs once, not a second time at the deadline.
func TestIssue126027_AddPullsDelayedItemForward(t *testing.T) {
	tests := []struct {
		name string
		add  func(q *Queue[string])
	}{
		{"Add", func(q *Queue[string]) { q.Add("x") }},
		{"AddAfter zero", func(q *Queue[string]) { q.AddAfter("x", 0) }},
		{"AddWithOpts", func(q *Queue[string]) { q.AddWithOpts(AddOpts{Priority: ptr.To(-5)}, "x") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, c := newFakeQueue[string](t)
			q.AddAfter("x", 5*time.Hour)
			tc.add(q)
			assert.Equal(t, 1, q.Len())
			assert.Equal(t, 0, q.NumWaiting())
			item, _ := q.Get()
			q.Done(item)
			c.Step(6 * time.Hour)
			time.Sleep(10 * time.Millisecond)
			assert.Equal(t, 0, q.Len(), "the delayed copy must not run again")
			q.checkInvariants(t)
		})
	}
}

// client-go#131: a later AddAfter does not postpone an earlier one unless
// asked to with Reschedule.
func TestIssueClientGo131_LaterAddAfterOnlyPostponesWhenAsked(t *testing.T) {
	q, c := newFakeQueue[string](t)
	q.AddAfter("x", time.Second)
	q.AddAfter("x", time.Hour)
	at, _ := q.Deadline("x")
	assert.Equal(t, time.Second, at.Sub(c.Now()))
	q.Reschedule("x", time.Hour)
	at, _ = q.Deadline("x")
	assert.Equal(t, time.Hour, at.Sub(c.Now()))
}

// kubernetes#79934: a Done without a Get is ignored and never duplicates.
func TestIssue79934_UnpairedDoneIsIgnored(t *testing.T) {
	tests := []struct {
		name  string
		setup func(q *Queue[string])
		want  int
	}{
		{"queued item", func(q *Queue[string]) { q.Add("x") }, 1},
		{"unknown item", func(*Queue[string]) {}, 0},
		{"waiting item", func(q *Queue[string]) { q.AddAfter("x", time.Hour) }, 0},
		{"done twice", func(q *Queue[string]) {
			q.Add("x")
			i, _ := q.Get()
			q.Add("x")
			q.Done(i)
		}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := newFakeQueue[string](t)
			tc.setup(q)
			q.Done("x")
			q.Done("x")
			assert.Equal(t, tc.want, q.Len())
			q.checkInvariants(t)
			if tc.want == 1 {
				_, _ = q.Get()
				assert.Equal(t, 0, q.Len(), "no second copy")
			}
		})
	}
}

// kubernetes#141079: the drain waits for queued items too, not only for
// in-flight ones, and Done wakes the drainer rather than a Get waiter.
func TestIssue141079_DrainWaitsForQueuedItems(t *testing.T) {
	q := New[string]()
	q.Add("a")
	q.Add("b")
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		q.ShutDownWithDrain()
	}()
	require.Eventually(t, q.ShuttingDown, time.Second, time.Millisecond)
	select {
	case <-finished:
		t.Fatal("drain returned with queued items and no worker mid-item")
	case <-time.After(20 * time.Millisecond):
	}
	for range 2 {
		item, quit := q.Get()
		require.False(t, quit)
		q.Done(item)
	}
	select {
	case <-finished:
	case <-time.After(time.Second):
		t.Fatal("drain did not finish")
	}
}

func TestShutDownWithDrainContext(t *testing.T) {
	q := New[string]()
	q.Add("a")
	item, _ := q.Get()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := q.ShutDownWithDrainContext(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	q.Done(item)
	require.NoError(t, q.ShutDownWithDrainContext(context.Background()))
}

// kubernetes#134323: no goroutine of the queue survives ShutDown, whatever
// it was used for.
func TestIssue134323_ShutDownLeavesNoGoroutine(t *testing.T) {
	tests := []struct {
		name string
		use  func(q *Queue[string])
		stop func(q *Queue[string])
	}{
		{"plain", func(q *Queue[string]) { q.Add("x") }, (*Queue[string]).ShutDown},
		{"delayed", func(q *Queue[string]) { q.AddAfter("x", time.Hour) }, (*Queue[string]).ShutDown},
		{"delayed drain", func(q *Queue[string]) { q.AddAfter("x", time.Hour) }, (*Queue[string]).ShutDownWithDrain},
		{"metrics", func(q *Queue[string]) {}, (*Queue[string]).ShutDown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := goleak.IgnoreCurrent()
			q := New[string](WithName("leak"), WithMetricsProvider(&testProvider{}))
			tc.use(q)
			if q.Len() > 0 {
				i, _ := q.Get()
				q.Done(i)
			}
			tc.stop(q)
			// ShutDown waited for the loop: at most its final return can
			// still be on the way, which goleak's short retry covers.
			goleak.VerifyNone(t, before)
		})
	}
}

// AddAfter never blocks and the delay stage never starts a goroutine per
// item: 100k pending delays, one goroutine.
func TestAddAfterNeverBlocksNorSpawns(t *testing.T) {
	before := goleak.IgnoreCurrent()
	q := New[int]()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100_000 {
			q.AddAfter(i, time.Hour)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("AddAfter blocked")
	}
	assert.Equal(t, 100_000, q.NumWaiting())
	assert.Equal(t, 1, loopGoroutines(), "one delay loop, however many items wait")
	q.ShutDown()
	goleak.VerifyNone(t, before)
}

// crossplane-runtime#674: delayed items are visible to NumWaiting and, with
// a provider that supports it, to a waiting-depth gauge.
func TestIssueCrossplane674_DelayedItemsAreVisible(t *testing.T) {
	p := &testProvider{}
	q, c := newFakeQueue[string](t, WithName("q"), WithMetricsProvider(p))
	q.AddAfter("a", time.Second)
	q.AddAfter("b", time.Minute)
	assert.Equal(t, 2, q.NumWaiting())
	assert.EqualValues(t, 2, p.waiting.value())
	c.Step(time.Second)
	require.Eventually(t, func() bool { return q.NumWaiting() == 1 }, time.Second, time.Millisecond)
	assert.EqualValues(t, 1, p.waiting.value())
	assert.EqualValues(t, 1, p.depth.value())
}

// kubernetes#138743: limiter state is bounded even if Forget is never called.
func TestIssue138743_LimiterStateIsBounded(t *testing.T) {
	tests := []struct {
		name string
		rl   interface {
			RateLimiter[int]
			tracked() int
		}
	}{
		{"exponential", NewItemExponentialFailureRateLimiter[int](time.Millisecond, time.Second, WithMaxTrackedItems(100))},
		{"fast-slow", NewItemFastSlowRateLimiter[int](time.Millisecond, time.Second, 3, WithMaxTrackedItems(100))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for i := range 10_000 {
				tc.rl.When(i)
			}
			assert.Equal(t, 100, tc.rl.tracked())
			tc.rl.When(9999)
			assert.Equal(t, 2, tc.rl.NumRequeues(9999), "a tracked item keeps its history")
			for i := range 10_000 {
				tc.rl.Forget(i)
			}
			assert.Equal(t, 0, tc.rl.tracked(), "Forget releases state")
		})
	}
}

func (r *ItemExponentialFailureRateLimiter[T]) tracked() int { return r.f.len() }
func (r *ItemFastSlowRateLimiter[T]) tracked() int           { return r.f.len() }

// At the cap, new items evict the item with the fewest failures (the least
// recently failed among equals), never an item deep in its backoff. Before,
// an arbitrary item was dropped, so a flood of new failures could reset a
// 1000 s backoff to 5 ms.
func TestIssue138743_CapEvictsLeastFailed(t *testing.T) {
	l := NewItemExponentialFailureRateLimiter[int](5*time.Millisecond, 1000*time.Second, WithMaxTrackedItems(8))
	const slow = -1
	for range 20 {
		l.When(slow)
	}
	require.Equal(t, 1000*time.Second, l.When(slow))
	for i := range 1000 { // each new item evicts the previous one-failure item
		l.When(i)
	}
	assert.Equal(t, 21, l.NumRequeues(slow), "the long backoff survived the flood")
	assert.Equal(t, 1000*time.Second, l.When(slow))
	assert.Equal(t, 1, l.NumRequeues(999), "the newest item is tracked")
	assert.Equal(t, 8, l.tracked())

	// Among equal counts the least recently failed goes first.
	l = NewItemExponentialFailureRateLimiter[int](time.Millisecond, time.Second, WithMaxTrackedItems(3))
	l.When(1)
	l.When(2)
	l.When(3)
	l.When(4) // evicts 1
	assert.Equal(t, 0, l.NumRequeues(1))
	assert.Equal(t, 1, l.NumRequeues(2))
	l.When(2) // 2 now has two failures; 3 is the oldest one-failure item
	l.When(5) // evicts 3
	assert.Equal(t, 0, l.NumRequeues(3))
	assert.Equal(t, 2, l.NumRequeues(2))
	assert.Equal(t, 1, l.NumRequeues(4))
	assert.Equal(t, 1, l.NumRequeues(5))
}

func TestWithMaxTrackedItemsRejectsNonPositive(t *testing.T) {
	assert.PanicsWithValue(t, "workqueue: WithMaxTrackedItems: cap 0 is below 1",
		func() { WithMaxTrackedItems(0) })
}

// kubernetes#91800: a blocked Get can be stopped with a context without
// shutting the queue down.
func TestIssue91800_GetContextStopsWithoutShutdown(t *testing.T) {
	q := New[string]()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	results := make(chan bool, 3)
	for range 3 {
		wg.Go(func() {
			_, quit := q.GetContext(ctx)
			results <- quit
		})
	}
	time.Sleep(10 * time.Millisecond)
	cancel()
	wg.Wait()
	close(results)
	for quit := range results {
		assert.True(t, quit)
	}
	assert.False(t, q.ShuttingDown())

	// The queue still works, and a done ctx still hands out ready items.
	q.Add("x")
	item, quit := q.GetContext(ctx)
	assert.False(t, quit)
	assert.Equal(t, "x", item)
	q.Done(item)
	_, quit = q.GetContext(ctx)
	assert.True(t, quit, "a done ctx does not block")
	q.ShutDown()
}

func TestGetContextReceivesItem(t *testing.T) {
	tests := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"background", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }},
		{"cancellable", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := New[string]()
			ctx, cancel := tc.ctx()
			defer cancel()
			got := make(chan string)
			go func() {
				item, _ := q.GetContext(ctx)
				got <- item
			}()
			time.Sleep(5 * time.Millisecond)
			q.Add("x")
			assert.Equal(t, "x", <-got)
			q.ShutDown()
		})
	}
}

// controller-runtime#3496: with ageing, low-priority items are served even
// while higher priorities keep arriving.
func TestIssueCR3496_AgeingPreventsStarvation(t *testing.T) {
	tests := []struct {
		name      string
		ageing    time.Duration
		wantAging bool
	}{
		{"ageing on", time.Minute, true},
		{"strict priorities", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, c := newFakeQueue[int](t, WithAgeing(tc.ageing))
			q.AddWithOpts(AddOpts{Priority: ptr.To(-100)}, -1)
			served := false
			for i := range 200 {
				q.AddWithOpts(AddOpts{Priority: ptr.To(0)}, i) // a steady stream of normal work
				item, _ := q.Get()
				q.Done(item)
				if item == -1 {
					served = true
					break
				}
				c.Step(time.Second)
			}
			assert.Equal(t, tc.wantAging, served)
		})
	}
}

// loopGoroutines counts running delay loops of any queue, right now.
func loopGoroutines() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "workqueue.(*Queue[...]).loop(")
}
