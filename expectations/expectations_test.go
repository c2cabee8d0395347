package expectations

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestControlleeExpectationsCounters(t *testing.T) {
	tests := []struct {
		name             string
		adds             [][2]int64
		wantAdd, wantDel int64
		wantFulfilled    bool
	}{
		{name: "fresh record expects nothing", wantFulfilled: true},
		{name: "positive add pending", adds: [][2]int64{{1, 0}}, wantAdd: 1, wantFulfilled: false},
		{name: "positive del pending", adds: [][2]int64{{0, 1}}, wantDel: 1, wantFulfilled: false},
		{name: "both met exactly", adds: [][2]int64{{2, 3}, {-2, -3}}, wantFulfilled: true},
		{name: "negative counters are not clamped", adds: [][2]int64{{1, 1}, {-3, -2}}, wantAdd: -2, wantDel: -1, wantFulfilled: true},
		{name: "add met but del pending", adds: [][2]int64{{1, 1}, {-1, 0}}, wantDel: 1, wantFulfilled: false},
		{name: "del met but add pending", adds: [][2]int64{{1, 1}, {0, -5}}, wantAdd: 1, wantDel: -4, wantFulfilled: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e ControlleeExpectations
			for _, d := range tt.adds {
				e.Add(d[0], d[1])
			}
			add, del := e.GetExpectations()
			assert.Equal(t, tt.wantAdd, add)
			assert.Equal(t, tt.wantDel, del)
			assert.Equal(t, tt.wantFulfilled, e.Fulfilled())
		})
	}
}

// TestSatisfiedExpectationsDecisionTable pins every row of spec §1.4, plus
// the strictly-greater boundary of the expiry rule.
func TestSatisfiedExpectationsDecisionTable(t *testing.T) {
	const ttl = 30 * time.Second
	tests := []struct {
		name string
		set  bool
		add  int
		del  int
		step time.Duration
		want bool
	}{
		{name: "exists, fulfilled, fresh", set: true, add: 0, del: 0, want: true},
		{name: "exists, fulfilled (negative), expired", set: true, add: -1, del: -1, step: ttl + time.Second, want: true},
		{name: "exists, unfulfilled, expired", set: true, add: 1, del: 0, step: ttl + time.Nanosecond, want: true},
		{name: "exists, unfulfilled, exactly at ttl is not expired", set: true, add: 0, del: 1, step: ttl, want: false},
		{name: "exists, unfulfilled, fresh", set: true, add: 2, del: 2, want: false},
		{name: "missing, never set", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, clk, _ := newTestCache(t, ttl)
			if tt.set {
				require.NoError(t, c.SetExpectations("k", tt.add, tt.del))
			}
			clk.Step(tt.step)
			assert.Equal(t, tt.want, c.SatisfiedExpectations("k"))
		})
	}
}

// TestMethodTable pins spec §1.3: what each method does with a known and an
// unknown key.
func TestMethodTable(t *testing.T) {
	type step func(c *ControllerExpectations) error
	set := func(add, del int) step {
		return func(c *ControllerExpectations) error { return c.SetExpectations("k", add, del) }
	}
	tests := []struct {
		name             string
		steps            []step
		wantExists       bool
		wantAdd, wantDel int64
	}{
		{name: "lower on unknown key creates nothing", steps: []step{func(c *ControllerExpectations) error { c.LowerExpectations("k", 1, 1); return nil }}},
		{name: "raise on unknown key creates nothing", steps: []step{func(c *ControllerExpectations) error { c.RaiseExpectations("k", 1, 1); return nil }}},
		{name: "creation observed on unknown key", steps: []step{func(c *ControllerExpectations) error { c.CreationObserved("k"); return nil }}},
		{name: "deletion observed on unknown key", steps: []step{func(c *ControllerExpectations) error { c.DeletionObserved("k"); return nil }}},
		{name: "delete unknown key", steps: []step{func(c *ControllerExpectations) error { c.DeleteExpectations("k"); return nil }}},
		{name: "set creates", steps: []step{set(3, 4)}, wantExists: true, wantAdd: 3, wantDel: 4},
		{name: "set may be negative", steps: []step{set(-1, -2)}, wantExists: true, wantAdd: -1, wantDel: -2},
		{name: "set replaces old counts", steps: []step{set(3, 4), set(1, 0)}, wantExists: true, wantAdd: 1, wantDel: 0},
		{name: "expect creations resets del", steps: []step{set(3, 4), func(c *ControllerExpectations) error { return c.ExpectCreations("k", 2) }}, wantExists: true, wantAdd: 2},
		{name: "expect deletions resets add", steps: []step{set(3, 4), func(c *ControllerExpectations) error { return c.ExpectDeletions("k", 5) }}, wantExists: true, wantDel: 5},
		{name: "lower may go negative", steps: []step{set(1, 1), func(c *ControllerExpectations) error { c.LowerExpectations("k", 3, 2); return nil }}, wantExists: true, wantAdd: -2, wantDel: -1},
		{name: "raise adds", steps: []step{set(1, 1), func(c *ControllerExpectations) error { c.RaiseExpectations("k", 2, 3); return nil }}, wantExists: true, wantAdd: 3, wantDel: 4},
		{name: "creation observed lowers add", steps: []step{set(2, 2), func(c *ControllerExpectations) error { c.CreationObserved("k"); return nil }}, wantExists: true, wantAdd: 1, wantDel: 2},
		{name: "deletion observed lowers del", steps: []step{set(2, 2), func(c *ControllerExpectations) error { c.DeletionObserved("k"); return nil }}, wantExists: true, wantAdd: 2, wantDel: 1},
		{name: "delete removes", steps: []step{set(2, 2), func(c *ControllerExpectations) error { c.DeleteExpectations("k"); return nil }}},
		{name: "empty key is an ordinary key", steps: []step{func(c *ControllerExpectations) error { return c.SetExpectations("", 1, 1) }}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, _ := newTestCache(t, 0)
			for _, s := range tt.steps {
				require.NoError(t, s(c))
			}
			rec, exists, err := c.GetExpectations("k")
			require.NoError(t, err)
			require.Equal(t, tt.wantExists, exists)
			if !exists {
				assert.Nil(t, rec)
				if tt.name != "empty key is an ordinary key" {
					assert.Zero(t, c.Len(), "no record may be created")
				}
				return
			}
			add, del := rec.GetExpectations()
			assert.Equal(t, tt.wantAdd, add)
			assert.Equal(t, tt.wantDel, del)
			assert.Equal(t, "k", rec.Key())
		})
	}
}

func TestEmptyKeyIsOrdinary(t *testing.T) {
	c, _, _ := newTestCache(t, 0)
	require.NoError(t, c.ExpectCreations("", 1))
	assert.False(t, c.SatisfiedExpectations(""))
	assert.True(t, c.SatisfiedExpectations("other"))
	c.CreationObserved("")
	assert.True(t, c.SatisfiedExpectations(""))
	assert.Equal(t, 1, c.Len())
}

func TestRaiseLowerDoNotRefreshTTL(t *testing.T) {
	c, clk, _ := newTestCache(t, time.Minute)
	require.NoError(t, c.ExpectCreations("k", 2))
	clk.Step(40 * time.Second)
	c.RaiseExpectations("k", 1, 0)
	c.CreationObserved("k")
	assert.False(t, c.SatisfiedExpectations("k"))
	clk.Step(21 * time.Second) // 61 s after the Set
	assert.True(t, c.SatisfiedExpectations("k"), "the TTL counts from the Set, not from later updates")
}

func TestExpiredRecordReadsAsAbsent(t *testing.T) {
	c, clk, _ := newTestCache(t, time.Minute)
	require.NoError(t, c.ExpectCreations("k", 1))
	clk.Step(time.Minute + time.Nanosecond)
	c.CreationObserved("k") // a late observation does not revive it
	_, exists, err := c.GetExpectations("k")
	require.NoError(t, err)
	assert.False(t, exists)
	assert.Zero(t, c.Len(), "the expired record was evicted by the read")
}

// TestUpstreamControllerExpectations ports upstream's TestControllerExpectations.
func TestUpstreamControllerExpectations(t *testing.T) {
	const ttl = 30 * time.Second
	c, clk, _ := newTestCache(t, ttl)
	const key = "default/rc"
	adds, dels := 10, 30
	require.NoError(t, c.SetExpectations(key, adds, dels))

	var wg sync.WaitGroup
	for range adds + 1 {
		wg.Go(func() { c.CreationObserved(key) })
	}
	wg.Wait()
	assert.False(t, c.SatisfiedExpectations(key), "deletions are still pending")

	for range dels + 1 {
		wg.Go(func() { c.DeletionObserved(key) })
	}
	wg.Wait()

	t.Run("Expectations have been surpassed", func(t *testing.T) {
		rec, exists, err := c.GetExpectations(key)
		require.NoError(t, err)
		require.True(t, exists)
		add, del := rec.GetExpectations()
		assert.Equal(t, int64(-1), add)
		assert.Equal(t, int64(-1), del)
		assert.True(t, c.SatisfiedExpectations(key))
	})

	t.Run("Old expectations are cleared because of ttl", func(t *testing.T) {
		require.NoError(t, c.SetExpectations(key, 1, 2))
		rec, exists, err := c.GetExpectations(key)
		require.NoError(t, err)
		require.True(t, exists)
		add, del := rec.GetExpectations()
		assert.Equal(t, int64(1), add)
		assert.Equal(t, int64(2), del)
		assert.False(t, c.SatisfiedExpectations(key))

		clk.Step(ttl + time.Second)
		assert.True(t, c.SatisfiedExpectations(key))
		_, exists, err = c.GetExpectations(key)
		require.NoError(t, err)
		assert.False(t, exists, "an expired record reads as absent, as in upstream's TTL test store")
	})
}

func TestRecordTimestampFollowsClock(t *testing.T) {
	c, clk, _ := newTestCache(t, 0)
	clk.Step(time.Hour)
	require.NoError(t, c.ExpectCreations("k", 1))
	rec, ok, err := c.GetExpectations("k")
	require.NoError(t, err)
	require.True(t, ok)
	assert.True(t, rec.Timestamp().Equal(upstreamTestTime.Add(time.Hour)), "got %v", rec.Timestamp())
}

// A re-Set replaces the record, as upstream: a pointer from GetExpectations
// keeps the counts it had.
func TestSetReplacesRecord(t *testing.T) {
	c, _, _ := newTestCache(t, 0)
	require.NoError(t, c.ExpectCreations("k", 1))
	first, _, _ := c.GetExpectations("k")
	require.NoError(t, c.ExpectCreations("k", 5))
	second, _, _ := c.GetExpectations("k")
	assert.NotSame(t, first, second)
	add, _ := first.GetExpectations()
	assert.Equal(t, int64(1), add)
	add, _ = second.GetExpectations()
	assert.Equal(t, int64(5), add)
}

// A record nobody holds is reset in place on re-Set, so an owner's steady
// expect, observe, check cycle allocates nothing; a record handed out by
// GetExpectations is replaced instead (TestSetReplacesRecord).
func TestSteadyCycleAllocatesNothing(t *testing.T) {
	c, _, _ := newTestCache(t, 0)
	require.NoError(t, c.ExpectCreations("k", 1))
	satisfied := true
	allocs := testing.AllocsPerRun(100, func() {
		_ = c.ExpectCreations("k", 1)
		c.CreationObserved("k")
		satisfied = satisfied && c.SatisfiedExpectations("k")
	})
	assert.True(t, satisfied)
	assert.Zero(t, allocs)
}

func TestExtremeCounts(t *testing.T) {
	c, _, _ := newTestCache(t, 0)
	require.NoError(t, c.SetExpectations("k", math.MaxInt, math.MinInt))
	rec, _, _ := c.GetExpectations("k")
	add, del := rec.GetExpectations()
	assert.Equal(t, int64(math.MaxInt), add)
	assert.Equal(t, int64(math.MinInt), del)
	assert.NotPanics(t, func() { c.LowerExpectations("k", math.MinInt, math.MaxInt) })
}

// A raise or lower by a huge count saturates: the old counters were plain
// atomic adds, so ExpectCreations(1) followed by RaiseExpectations(MaxInt)
// wrapped to a negative count and reported the owner satisfied.
func TestHugeRaiseAndLowerSaturate(t *testing.T) {
	c, _, _ := newTestCache(t, 0)
	require.NoError(t, c.ExpectCreations("k", 1))
	// Start near the top, so that a raise by the largest int (32 or 64
	// bits wide) would wrap without saturation.
	rec, _, _ := c.GetExpectations("k")
	rec.Add(math.MaxInt64-2, math.MaxInt64-2)
	c.RaiseExpectations("k", math.MaxInt, 0)
	assert.False(t, c.SatisfiedExpectations("k"), "a huge raise must not wrap to satisfied")
	c.RaiseExpectations("k", math.MaxInt, math.MaxInt)
	add, del := rec.GetExpectations()
	assert.Equal(t, int64(math.MaxInt64), add)
	assert.Equal(t, int64(math.MaxInt64), del)

	require.NoError(t, c.ExpectCreations("k", 0))
	rec, _, _ = c.GetExpectations("k")
	rec.Add(math.MinInt64+2, 0)
	c.LowerExpectations("k", math.MaxInt, 0)
	c.CreationObserved("k")
	assert.True(t, c.SatisfiedExpectations("k"), "a huge lower must not wrap to waiting")
	add, _ = rec.GetExpectations()
	assert.Equal(t, int64(math.MinInt64), add)

	// Lowering by the most negative int raises as far as it can.
	require.NoError(t, c.ExpectCreations("k", 0))
	c.LowerExpectations("k", math.MinInt, 0)
	assert.False(t, c.SatisfiedExpectations("k"))

	// The record's own Add saturates too.
	var e ControlleeExpectations
	e.Add(math.MaxInt64, math.MinInt64)
	e.Add(1, -1)
	add, del = e.GetExpectations()
	assert.Equal(t, [2]int64{math.MaxInt64, math.MinInt64}, [2]int64{add, del})
}
