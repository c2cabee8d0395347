package workqueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// recordingLimiter returns a fixed delay and counts its calls.
type recordingLimiter struct {
	delay time.Duration
	calls map[string]int
}

func (l *recordingLimiter) When(item string) time.Duration { l.calls[item]++; return l.delay }
func (l *recordingLimiter) Forget(item string)             { delete(l.calls, item) }
func (l *recordingLimiter) NumRequeues(item string) int    { return l.calls[item] }

// AddWithOpts follows controller-runtime's priorityqueue.AddWithOpts: the
// shorter of After and the limiter's delay, nil priority means 0, and an
// item already queued keeps the higher priority and the sooner ready time.
func TestAddWithOpts(t *testing.T) {
	tests := []struct {
		name         string
		limiterDelay time.Duration
		opts         AddOpts
		wantDeadline time.Duration // 0: ready now
		wantPrio     int
	}{
		{name: "zero opts is Add", wantPrio: DefaultPriority},
		{name: "after", opts: AddOpts{After: time.Minute}, wantDeadline: time.Minute},
		{name: "negative after is now", opts: AddOpts{After: -time.Second}},
		{name: "rate limited", limiterDelay: time.Second, opts: AddOpts{RateLimited: true}, wantDeadline: time.Second},
		{name: "rate limited and after: limiter shorter", limiterDelay: time.Second,
			opts: AddOpts{RateLimited: true, After: time.Minute}, wantDeadline: time.Second},
		{name: "rate limited and after: after shorter", limiterDelay: time.Hour,
			opts: AddOpts{RateLimited: true, After: time.Minute}, wantDeadline: time.Minute},
		{name: "priority", opts: AddOpts{Priority: ptr.To(7)}, wantPrio: 7},
		{name: "delayed priority", opts: AddOpts{After: time.Second, Priority: ptr.To(-3)},
			wantDeadline: time.Second, wantPrio: -3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
			l := &recordingLimiter{delay: tc.limiterDelay, calls: map[string]int{}}
			q := NewRateLimiting[string](l, WithClock(c))
			defer q.ShutDown()
			q.AddWithOpts(tc.opts, "a", "b")
			if tc.opts.RateLimited {
				assert.Equal(t, 1, q.NumRequeues("a"), "the limiter records one failure per item")
				assert.Equal(t, 1, q.NumRequeues("b"))
			}
			if tc.wantDeadline > 0 {
				at, ok := q.Deadline("a")
				require.True(t, ok)
				assert.Equal(t, c.Now().Add(tc.wantDeadline), at)
				assert.Equal(t, 2, q.NumWaiting())
				c.Step(tc.wantDeadline)
				waitLen(t, q.Queue, 2)
			}
			require.Equal(t, 2, q.Len())
			for _, want := range []string{"a", "b"} {
				item, prio, quit := q.GetWithPriority()
				require.False(t, quit)
				assert.Equal(t, want, item)
				assert.Equal(t, tc.wantPrio, prio)
				q.Done(item)
			}
		})
	}
}

func TestAddWithOptsMergesWithQueuedItem(t *testing.T) {
	t.Run("higher priority wins, nil counts as 0", func(t *testing.T) {
		q := New[string]()
		defer q.ShutDown()
		q.AddWithOpts(AddOpts{Priority: ptr.To(-100)}, "a")
		q.AddWithOpts(AddOpts{}, "a")
		_, prio, _ := q.GetWithPriority()
		assert.Equal(t, 0, prio)
	})
	t.Run("lower priority does not lower", func(t *testing.T) {
		q := New[string]()
		defer q.ShutDown()
		q.AddWithOpts(AddOpts{Priority: ptr.To(10)}, "a")
		q.AddWithOpts(AddOpts{Priority: ptr.To(1)}, "a")
		_, prio, _ := q.GetWithPriority()
		assert.Equal(t, 10, prio)
	})
	t.Run("sooner deadline wins, priority merges", func(t *testing.T) {
		q, c := newFakeQueue[string](t)
		q.AddWithOpts(AddOpts{After: time.Hour, Priority: ptr.To(5)}, "a")
		q.AddWithOpts(AddOpts{After: time.Minute, Priority: ptr.To(1)}, "a")
		at, ok := q.Deadline("a")
		require.True(t, ok)
		assert.Equal(t, c.Now().Add(time.Minute), at)
		q.AddWithOpts(AddOpts{After: 2 * time.Hour}, "a")
		at, _ = q.Deadline("a")
		assert.Equal(t, c.Now().Add(time.Minute), at, "a later deadline never postpones")
		c.Step(time.Minute)
		waitLen(t, q, 1)
		_, prio, _ := q.GetWithPriority()
		assert.Equal(t, 5, prio)
	})
	t.Run("an immediate add pulls a waiting item forward", func(t *testing.T) {
		q, _ := newFakeQueue[string](t)
		q.AddWithOpts(AddOpts{After: time.Hour}, "a")
		q.AddWithOpts(AddOpts{Priority: ptr.To(3)}, "a")
		assert.Equal(t, 0, q.NumWaiting())
		item, prio, _ := q.GetWithPriority()
		assert.Equal(t, "a", item)
		assert.Equal(t, 3, prio)
	})
	t.Run("added while processing runs again after Done", func(t *testing.T) {
		q := New[string]()
		defer q.ShutDown()
		q.Add("a")
		item, _ := q.Get()
		q.AddWithOpts(AddOpts{Priority: ptr.To(2)}, "a")
		assert.Equal(t, 0, q.Len())
		q.Done(item)
		_, prio, _ := q.GetWithPriority()
		assert.Equal(t, 2, prio)
	})
	t.Run("ignored after shutdown", func(t *testing.T) {
		q := New[string]()
		q.ShutDown()
		q.AddWithOpts(AddOpts{Priority: ptr.To(2)}, "a", "b")
		assert.Equal(t, 0, q.Len())
	})
}

func TestWithAgeingRejectsNegative(t *testing.T) {
	assert.PanicsWithValue(t,
		"workqueue: WithAgeing: negative ageing period -1s; 0 makes priorities strict",
		func() { WithAgeing(-time.Second) })
}
