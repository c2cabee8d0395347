package workqueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// A nil limiter means DefaultControllerRateLimiter, as NewRateLimiting's doc
// says and client-go users expect; it used to panic at the first Forget.
func TestNewRateLimitingNilLimiterIsDefault(t *testing.T) {
	q := NewRateLimiting[string](nil)
	defer q.ShutDown()
	require.NotPanics(t, func() {
		q.AddRateLimited("a")
		q.AddRateLimited("a")
		assert.Equal(t, 2, q.NumRequeues("a"))
		q.Forget("a")
	})
	assert.Equal(t, 0, q.NumRequeues("a"))
	d := q.limiter.When("b")
	assert.Equal(t, 5*time.Millisecond, d, "the default limiter's first per-item delay")
	q.AddWithOpts(AddOpts{RateLimited: true}, "c")
	assert.Equal(t, 1, q.NumRequeues("c"))
}

// BucketRateLimiter's doc says a nil Limiter never delays.
func TestBucketRateLimiterNilLimiterNeverDelays(t *testing.T) {
	r := &BucketRateLimiter[string]{}
	require.NotPanics(t, func() { assert.Zero(t, r.When("a")) })
	var _ RateLimiter[string] = &BucketRateLimiter[string]{Limiter: rate.NewLimiter(1, 1)}
}

func TestNilOptionsAreIgnored(t *testing.T) {
	var none Option
	q := New[string](nil, WithName(""), none)
	defer q.ShutDown()
	q.Add("a")
	assert.Equal(t, 1, q.Len())
	l := NewItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second, nil)
	assert.Equal(t, time.Millisecond, l.When("a"))
}

// Values that can never be right panic at the option or constructor call,
// in the caller's goroutine, with a message naming it.
func TestProgrammerErrorsPanicAtTheCall(t *testing.T) {
	assert.PanicsWithValue(t, "workqueue: WithClock: nil clock; omit the option for the real clock",
		func() { WithClock(nil) })
	assert.PanicsWithValue(t, "workqueue: WithAgeing: negative ageing period -1s; 0 makes priorities strict",
		func() { WithAgeing(-time.Second) })
	assert.PanicsWithValue(t, "workqueue: NewWithMaxWaitRateLimiter: nil rate limiter",
		func() { NewWithMaxWaitRateLimiter[string](nil, time.Second) })
	assert.PanicsWithValue(t, "workqueue: NewMaxOfRateLimiter: limiter 1 is nil",
		func() { NewMaxOfRateLimiter(DefaultItemBasedRateLimiter[string](), nil) })
}
