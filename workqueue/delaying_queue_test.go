package workqueue

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	testingclock "k8s.io/utils/clock/testing"
)

func newFakeQueue[T comparable](t *testing.T, opts ...Option) (*Queue[T], *testingclock.FakeClock) {
	t.Helper()
	c := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
	q := NewDelaying[T](append([]Option{WithClock(c)}, opts...)...)
	t.Cleanup(q.ShutDown)
	return q, c
}

func waitLen[T comparable](t *testing.T, q *Queue[T], n int) {
	t.Helper()
	require.Eventually(t, func() bool { return q.Len() == n }, 5*time.Second, time.Millisecond,
		"want Len %d, have %d", n, q.Len())
}

func TestSimpleQueue(t *testing.T) {
	q, c := newFakeQueue[string](t)
	q.AddAfter("foo", 50*time.Millisecond)
	assert.Equal(t, 0, q.Len())
	assert.Equal(t, 1, q.NumWaiting())

	c.Step(60 * time.Millisecond)
	waitLen(t, q, 1)
	item, _ := q.Get()
	q.Done(item)
	assert.Equal(t, "foo", item)
	assert.Equal(t, 0, q.NumWaiting())

	// Stepping again must not bring it back.
	c.Step(10 * time.Second)
	time.Sleep(10 * time.Millisecond)
	assert.Equal(t, 0, q.Len())
	q.checkInvariants(t)
}

func TestDeduping(t *testing.T) {
	q, c := newFakeQueue[string](t)
	q.AddAfter("foo", 50*time.Millisecond)
	q.AddAfter("foo", 70*time.Millisecond) // later: ignored
	assert.Equal(t, 1, q.NumWaiting())

	c.Step(60 * time.Millisecond)
	waitLen(t, q, 1)
	item, _ := q.Get()
	q.Done(item)

	c.Step(20 * time.Millisecond)
	time.Sleep(10 * time.Millisecond)
	assert.Equal(t, 0, q.Len(), "the later deadline was merged, not kept")

	q.AddAfter("foo", 70*time.Millisecond)
	q.AddAfter("foo", 50*time.Millisecond) // earlier: wins
	assert.Equal(t, 1, q.NumWaiting())
	c.Step(60 * time.Millisecond)
	waitLen(t, q, 1)
	item, _ = q.Get()
	q.Done(item)
	c.Step(20 * time.Millisecond)
	time.Sleep(10 * time.Millisecond)
	assert.Equal(t, 0, q.Len())
}

func TestAddTwoFireEarly(t *testing.T) {
	q, c := newFakeQueue[string](t)
	q.AddAfter("foo", time.Second)
	q.AddAfter("bar", 50*time.Millisecond)
	assert.Equal(t, 0, q.Len())

	c.Step(60 * time.Millisecond)
	waitLen(t, q, 1)
	item, _ := q.Get()
	assert.Equal(t, "bar", item)

	q.AddAfter("baz", 2*time.Second)
	c.Step(time.Second)
	waitLen(t, q, 1)
	item, _ = q.Get()
	assert.Equal(t, "foo", item)

	c.Step(2 * time.Second)
	waitLen(t, q, 1)
	item, _ = q.Get()
	assert.Equal(t, "baz", item)
}

// TestCopyShifting: items released together come out in deadline order.
func TestCopyShifting(t *testing.T) {
	q, c := newFakeQueue[string](t)
	q.AddAfter("foo", time.Second)
	q.AddAfter("bar", 500*time.Millisecond)
	q.AddAfter("baz", 250*time.Millisecond)
	assert.Equal(t, 0, q.Len())

	c.Step(2 * time.Second)
	waitLen(t, q, 3)
	var got []string
	for range 3 {
		item, _ := q.Get()
		got = append(got, item)
	}
	assert.Equal(t, []string{"baz", "bar", "foo"}, got)
}

func TestAddAfterNonPositiveAddsNow(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second, math.MinInt64} {
		q, _ := newFakeQueue[string](t)
		q.AddAfter("x", d)
		assert.Equal(t, 1, q.Len(), "delay %v", d)
		assert.Equal(t, 0, q.NumWaiting())
	}
}

func TestAddAfterHugeDelayDoesNotOverflow(t *testing.T) {
	q, c := newFakeQueue[string](t)
	q.AddAfter("x", math.MaxInt64)
	c.Step(1000 * time.Hour)
	time.Sleep(5 * time.Millisecond)
	assert.Equal(t, 0, q.Len())
	assert.Equal(t, 1, q.NumWaiting())
}

func TestAddAfterWhileProcessing(t *testing.T) {
	q, c := newFakeQueue[string](t)
	q.Add("x")
	item, _ := q.Get()
	q.AddAfter("x", time.Second)
	assert.Equal(t, 1, q.NumWaiting())
	c.Step(2 * time.Second)
	require.Eventually(t, func() bool { return q.NumWaiting() == 0 }, time.Second, time.Millisecond)
	assert.Equal(t, 0, q.Len(), "still processing: it waits for Done")
	q.Done(item)
	assert.Equal(t, 1, q.Len())
	q.checkInvariants(t)
}

func TestShutDownDropsWaiting(t *testing.T) {
	q, c := newFakeQueue[string](t)
	q.AddAfter("x", time.Second)
	q.ShutDown()
	assert.Equal(t, 0, q.NumWaiting())
	c.Step(time.Hour)
	_, quit := q.Get()
	assert.True(t, quit)
	q.AddAfter("y", time.Second)
	assert.Equal(t, 0, q.NumWaiting(), "AddAfter after shutdown is ignored")
}

func TestReschedule(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(q *Queue[string])
		after     time.Duration
		wantLen   int
		wantWait  int
		wantAfter time.Duration // deadline relative to now, when waiting
	}{
		{"absent item", func(*Queue[string]) {}, time.Minute, 0, 1, time.Minute},
		{"postpones a waiting item", func(q *Queue[string]) { q.AddAfter("x", time.Second) }, time.Minute, 0, 1, time.Minute},
		{"brings a waiting item forward", func(q *Queue[string]) { q.AddAfter("x", time.Hour) }, time.Minute, 0, 1, time.Minute},
		{"zero makes a waiting item ready", func(q *Queue[string]) { q.AddAfter("x", time.Hour) }, 0, 1, 0, 0},
		{"moves a ready item back", func(q *Queue[string]) { q.Add("x") }, time.Minute, 0, 1, time.Minute},
		{"zero keeps a ready item", func(q *Queue[string]) { q.Add("x") }, 0, 1, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, c := newFakeQueue[string](t)
			tc.setup(q)
			q.Reschedule("x", tc.after)
			assert.Equal(t, tc.wantLen, q.Len())
			assert.Equal(t, tc.wantWait, q.NumWaiting())
			at, ok := q.Deadline("x")
			assert.Equal(t, tc.wantWait == 1, ok)
			if ok {
				assert.Equal(t, tc.wantAfter, at.Sub(c.Now()))
			}
			q.checkInvariants(t)
		})
	}
}

func TestRescheduleWhileProcessing(t *testing.T) {
	q, c := newFakeQueue[string](t)
	q.Add("x")
	item, _ := q.Get()
	q.Add("x") // dirty: would run again at Done
	q.Reschedule("x", time.Minute)
	q.Done(item)
	assert.Equal(t, 0, q.Len(), "rescheduled, not due at Done")
	assert.Equal(t, 1, q.NumWaiting())
	c.Step(time.Minute)
	waitLen(t, q, 1)
	q.checkInvariants(t)
}
