package expectations

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestConcurrentUse hammers shared and distinct keys from many goroutines;
// run with -race. Each distinct key's final state is checked exactly, and the
// shared key must end in a state some interleaving could produce.
func TestConcurrentUse(t *testing.T) {
	c, clk, _ := newTestCache(t, time.Minute)
	u := NewUIDTrackingControllerExpectations(c)
	const workers, rounds = 16, 300
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			own := fmt.Sprintf("own-%d", w)
			for r := range rounds {
				// Distinct key: a full expect/observe cycle must end satisfied.
				require.NoError(t, c.ExpectCreations(own, 2))
				c.CreationObserved(own)
				assert.False(t, c.SatisfiedExpectations(own))
				c.CreationObserved(own)
				assert.True(t, c.SatisfiedExpectations(own))

				// Shared key: any mix of operations, no assertion on order.
				switch r % 6 {
				case 0:
					_ = c.ExpectDeletions("shared", 3)
				case 1:
					c.DeletionObserved("shared")
				case 2:
					_ = c.ExpectCreationsNamed("shared", []string{"a", "b"})
				case 3:
					c.CreationObservedNamed("shared", "a")
				case 4:
					c.SatisfiedExpectations("shared")
					c.Pending("shared")
					if rec, ok, _ := c.GetExpectations("shared"); ok {
						// A handed-out record is read outside the
						// cache's lock while others re-Set the key.
						rec.Fulfilled()
						rec.Timestamp()
					}
				case 5:
					if w == 0 {
						c.DeleteExpectations("shared")
						clk.Step(time.Second)
					}
					c.PendingAll()
				}

				// UID tracking on a per-worker owner plus a shared one.
				pods := []string{fmt.Sprintf("p-%d-%d", w, r), "common"}
				require.NoError(t, u.ExpectDeletions("u-"+own, pods))
				u.DeletionObserved("u-"+own, pods[0])
				u.DeletionObserved("u-"+own, pods[0])
				u.DeletionObserved("u-"+own, pods[1])
				assert.True(t, u.SatisfiedExpectations("u-"+own))
				_ = u.ExpectDeletions("u-shared", pods)
				u.DeletionObserved("u-shared", "common")
				u.GetUIDs("u-shared")
			}
		})
	}
	wg.Wait()
	for w := range workers {
		rec, ok, err := c.GetExpectations(fmt.Sprintf("own-%d", w))
		require.NoError(t, err)
		require.True(t, ok)
		add, del := rec.GetExpectations()
		assert.Zero(t, add)
		assert.Zero(t, del)
	}
	if rec, ok, _ := c.GetExpectations("shared"); ok {
		_, del := rec.GetExpectations()
		assert.LessOrEqual(t, del, int64(3))
	}
}

// reentrantClock calls back into the cache on every reading; if the cache
// held a lock while reading the clock, this would deadlock.
type reentrantClock struct {
	*clocktesting.FakePassiveClock
	mu    sync.Mutex
	cache *ControllerExpectations
}

func (r *reentrantClock) Now() time.Time {
	r.mu.Lock()
	c := r.cache
	r.mu.Unlock()
	if c != nil {
		c.Len()
	}
	return r.FakePassiveClock.Now()
}

func TestNoLockHeldAcrossCallbacks(t *testing.T) {
	clk := &reentrantClock{FakePassiveClock: clocktesting.NewFakePassiveClock(upstreamTestTime)}
	var c *ControllerExpectations
	var logged int
	var mu sync.Mutex
	logger := funcr.New(func(_, _ string) {
		// The sink re-enters the cache; a held lock would deadlock.
		mu.Lock()
		logged++
		mu.Unlock()
		c.Len()
		c.SatisfiedExpectations("k")
		_ = c.ExpectCreations("from-logger", 0)
	}, funcr.Options{})
	c = NewControllerExpectations(WithClock(clk), WithLogger(logger), WithTTL(time.Minute))
	clk.mu.Lock()
	clk.cache = c
	clk.mu.Unlock()

	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			_ = c.ExpectCreations(keyN(i), 1)
			c.CreationObserved(keyN(i + 1))
			c.SatisfiedExpectations(keyN(i))
			c.Pending(keyN(i))
		}
		clk.SetTime(upstreamTestTime.Add(time.Hour))
		for i := range 200 {
			c.SatisfiedExpectations(keyN(i))
		}
		c.EvictExpired()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("deadlock: a lock is held while calling the clock or the logger")
	}
	mu.Lock()
	defer mu.Unlock()
	// Each observation targets the next key before it is set, so it is a
	// no-op and all 200 records expire unfulfilled, each logged once.
	assert.Equal(t, 200, logged)
}

// TestConcurrentExpiryAndEviction races writes, reads, lazy
// eviction and sweeps over a small key space with a TTL the clock keeps
// crossing, then checks that the map is still consistent: every key reads
// back what was last written, and once everything has expired nothing is
// left.
func TestConcurrentExpiryAndEviction(t *testing.T) {
	clk := clocktesting.NewFakeClock(upstreamTestTime)
	c := NewControllerExpectations(WithClock(clk), WithTTL(time.Second), WithLogger(logr.New(&countingSink{})))
	const workers, rounds, keys = 8, 2000, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				k := keyN((w*7 + r) % keys)
				switch r % 8 {
				case 0, 1:
					_ = c.ExpectCreations(k, 1)
				case 2:
					c.CreationObserved(k)
				case 3:
					c.SatisfiedExpectations(k)
				case 4:
					c.DeleteExpectations(k)
				case 5:
					_, _, _ = c.GetExpectations(k)
				case 6:
					if w == 0 {
						clk.Step(300 * time.Millisecond)
					}
					c.Pending(k)
				case 7:
					if r%64 == 7 {
						c.EvictExpired()
					}
					_ = c.ExpectCreationsNamed(k, []string{"a"})
					c.CreationObservedNamed(k, "a")
				}
			}
		})
	}
	wg.Wait()

	live := 0
	for i := range keys {
		if _, ok, _ := c.GetExpectations(keyN(i)); ok {
			live++
		}
	}
	assert.Equal(t, live, c.Len(), "the map and the lookups agree")
	for i := range keys {
		require.NoError(t, c.ExpectCreations(keyN(i), 1))
		assert.False(t, c.SatisfiedExpectations(keyN(i)))
	}
	assert.Equal(t, keys, c.Len())
	clk.Step(2 * time.Second)
	for i := range keys {
		assert.True(t, c.SatisfiedExpectations(keyN(i)))
	}
	assert.Zero(t, c.Len())
}
