package workqueue

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"golang.org/x/time/rate"
)

func TestItemExponentialFailureRateLimiter(t *testing.T) {
	l := NewItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second)
	want := []time.Duration{1, 2, 4, 8, 16}
	for i, w := range want {
		assert.Equal(t, w*time.Millisecond, l.When("one"), "failure %d", i)
	}
	assert.Equal(t, 5, l.NumRequeues("one"))
	assert.Equal(t, time.Millisecond, l.When("two"))
	assert.Equal(t, 2*time.Millisecond, l.When("two"))
	assert.Equal(t, 2, l.NumRequeues("two"))

	l.Forget("one")
	assert.Equal(t, 0, l.NumRequeues("one"))
	assert.Equal(t, time.Millisecond, l.When("one"))
}

func TestItemExponentialFailureRateLimiterOverFlow(t *testing.T) {
	tests := []struct {
		name     string
		base     time.Duration
		max      time.Duration
		failures int
		want     time.Duration
	}{
		{"cap reached", time.Millisecond, 1000 * time.Second, 25, 1000 * time.Second},
		{"float overflow returns max", time.Minute, 1000 * time.Hour, 1000, 1000 * time.Hour},
		{"huge base", time.Duration(math.MaxInt64 / 2), time.Duration(math.MaxInt64), 3, time.Duration(math.MaxInt64)},
		{"zero base", 0, time.Second, 10, 0},
		{"default controller cap at 19th failure", 5 * time.Millisecond, 1000 * time.Second, 18, 1000 * time.Second},
		{"18th failure below cap", 5 * time.Millisecond, 1000 * time.Second, 17, 5 * time.Millisecond << 17},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := NewItemExponentialFailureRateLimiter[int](tc.base, tc.max)
			for range tc.failures {
				l.When(1)
			}
			assert.Equal(t, tc.want, l.When(1))
		})
	}
}

func TestItemFastSlowRateLimiter(t *testing.T) {
	l := NewItemFastSlowRateLimiter[string](5*time.Millisecond, 10*time.Second, 3)
	want := []time.Duration{5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond, 10 * time.Second, 10 * time.Second}
	for i, w := range want {
		assert.Equal(t, w, l.When("one"), "failure %d", i)
	}
	assert.Equal(t, 5, l.NumRequeues("one"))
	assert.Equal(t, 5*time.Millisecond, l.When("two"))
	l.Forget("one")
	assert.Equal(t, 0, l.NumRequeues("one"))
	assert.Equal(t, 5*time.Millisecond, l.When("one"))
}

func TestMaxOfRateLimiter(t *testing.T) {
	l := NewMaxOfRateLimiter[string](
		NewItemFastSlowRateLimiter[string](5*time.Millisecond, 3*time.Second, 3),
		NewItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second),
	)
	want := []time.Duration{5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond, 3 * time.Second, 3 * time.Second}
	for i, w := range want {
		assert.Equal(t, w, l.When("one"), "failure %d", i)
	}
	assert.Equal(t, 5, l.NumRequeues("one"))
	l.Forget("one")
	assert.Equal(t, 0, l.NumRequeues("one"))
	assert.Equal(t, 5*time.Millisecond, l.When("one"))

	empty := NewMaxOfRateLimiter[string]()
	assert.Equal(t, time.Duration(0), empty.When("x"))
	assert.Equal(t, 0, empty.NumRequeues("x"))
}

func TestWithMaxWaitRateLimiter(t *testing.T) {
	l := NewWithMaxWaitRateLimiter[string](NewItemExponentialFailureRateLimiter[string](time.Minute, 10*time.Minute), 2*time.Minute)
	assert.Equal(t, time.Minute, l.When("one"))
	assert.Equal(t, 2*time.Minute, l.When("one"))
	assert.Equal(t, 2*time.Minute, l.When("one"))
	assert.Equal(t, 3, l.NumRequeues("one"))
	l.Forget("one")
	assert.Equal(t, 0, l.NumRequeues("one"))
}

func TestBucketRateLimiter(t *testing.T) {
	b := &BucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(10), 2)}
	assert.Equal(t, time.Duration(0), b.When("a"))
	assert.Equal(t, time.Duration(0), b.When("b"))
	d := b.When("c")
	assert.InDelta(t, float64(100*time.Millisecond), float64(d), float64(5*time.Millisecond), "third token is booked 1/10 s ahead")
	assert.Equal(t, 0, b.NumRequeues("a"))
	b.Forget("a")
}

func TestDefaultControllerRateLimiter(t *testing.T) {
	l := DefaultControllerRateLimiter[string]()
	assert.Equal(t, 5*time.Millisecond, l.When("a"))
	assert.Equal(t, 10*time.Millisecond, l.When("a"))
	// The bucket's burst of 100 is mostly left; the 101st+ call waits for tokens.
	for i := range 200 {
		l.When(string(rune('b' + i)))
	}
	assert.Greater(t, l.When("zzz"), 9*time.Second, "a 10 qps bucket with burst 100 is exhausted")
	assert.Equal(t, 2, l.NumRequeues("a"))
	l.Forget("a")
	assert.Equal(t, 0, l.NumRequeues("a"))

	d := DefaultItemBasedRateLimiter[int]()
	assert.Equal(t, time.Millisecond, d.When(1))
}
