package expectations

import (
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrentResetsNeverTear pins that re-Sets of one existing record,
// which take only the record's busy stamp, are applied whole: writers that each
// set add == del must leave a record with add == del.
func TestConcurrentResetsNeverTear(t *testing.T) {
	c, _, _ := newTestCache(t, time.Minute)
	require.NoError(t, c.SetExpectations("k", 0, 0))
	// Each round releases the writers together, so the last two writes of
	// every round race; a tear shows as add != del after the round.
	for round := range 200 {
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				<-start
				n := round*10 + w
				assert.NoError(t, c.SetExpectations("k", n, n))
			})
		}
		close(start)
		wg.Wait()
		rec, ok, err := c.GetExpectations("k")
		require.NoError(t, err)
		require.True(t, ok)
		add, del := rec.GetExpectations()
		require.Equal(t, add, del, "round %d: a re-Set was applied half", round)
	}
	assert.Equal(t, 1, c.Len())
}

// TestResetRacesDeleteAndEviction races lock-free re-Sets of existing records
// with DeleteExpectations and with expiry eviction (the clock keeps passing
// the TTL), then checks the index and the lookups still agree and that a
// final Set is always visible.
func TestResetRacesDeleteAndEviction(t *testing.T) {
	c, clk, _ := newTestCache(t, time.Second)
	keys := []string{"a", "b", "c", "d"}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for r := range 400 {
				k := keys[(w+r)%len(keys)]
				switch (w + r) % 5 {
				case 0:
					c.DeleteExpectations(k)
				case 1:
					clk.Step(600 * time.Millisecond)
					c.SatisfiedExpectations(k)
				case 2:
					c.EvictExpired()
				default:
					assert.NoError(t, c.ExpectCreations(k, 1))
				}
			}
		})
	}
	wg.Wait()
	live := 0
	for _, k := range keys {
		if _, ok, _ := c.GetExpectations(k); ok {
			live++
		}
	}
	assert.Equal(t, live, c.Len(), "the index and the lookups agree")
	for _, k := range keys {
		require.NoError(t, c.ExpectCreations(k, 2))
		rec, ok, err := c.GetExpectations(k)
		require.NoError(t, err)
		require.True(t, ok, "a Set after the race is visible for %s", k)
		add, del := rec.GetExpectations()
		assert.Equal(t, [2]int64{2, 0}, [2]int64{add, del})
	}
	assert.Equal(t, len(keys), c.Len())
}

// TestResetSwitchesBetweenNamedAndCounted pins that the lock-free re-Set
// path declines named records, so switching a key between ExpectCreations
// and ExpectCreationsNamed always leaves the mode last asked for.
func TestResetSwitchesBetweenNamedAndCounted(t *testing.T) {
	tests := []struct {
		name       string
		set        func(c *ControllerExpectations)
		observe    string
		wantAdd    int64
		wantNames  []string
		wantSatisf bool
	}{
		{
			name: "named then counted forgets the names",
			set: func(c *ControllerExpectations) {
				require.NoError(t, c.ExpectCreationsNamed("k", []string{"p1", "p2"}))
				require.NoError(t, c.ExpectCreations("k", 1))
			},
			observe: "unexpected", wantAdd: 0, wantSatisf: true,
		},
		{
			name: "counted then named tracks the names",
			set: func(c *ControllerExpectations) {
				require.NoError(t, c.ExpectCreations("k", 1))
				require.NoError(t, c.ExpectCreations("k", 5))
				require.NoError(t, c.ExpectCreationsNamed("k", []string{"p1"}))
			},
			observe: "unexpected", wantAdd: 1, wantNames: []string{"p1"}, wantSatisf: false,
		},
		{
			name: "named re-set twice keeps the second set",
			set: func(c *ControllerExpectations) {
				require.NoError(t, c.ExpectCreationsNamed("k", []string{"p1"}))
				require.NoError(t, c.ExpectCreationsNamed("k", []string{"p2", "p3"}))
			},
			observe: "p1", wantAdd: 2, wantNames: []string{"p2", "p3"}, wantSatisf: false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := newTestCache(t, time.Minute)
			tc.set(c)
			c.CreationObservedNamed("k", tc.observe)
			r, ok := c.Pending("k")
			require.True(t, ok)
			assert.Equal(t, tc.wantAdd, r.Adds)
			assert.Equal(t, tc.wantNames, r.PendingNames)
			assert.Equal(t, tc.wantSatisf, c.SatisfiedExpectations("k"))
		})
	}
}

// TestResetOfExpiredRecordLogsOnce pins that a lock-free re-Set of an
// expired, unfulfilled record reports the expiry once and revives the key.
func TestResetOfExpiredRecordLogsOnce(t *testing.T) {
	c, clk, logs := newTestCache(t, time.Minute)
	require.NoError(t, c.ExpectCreations("k", 1))
	clk.Step(time.Minute + time.Nanosecond)
	require.NoError(t, c.ExpectCreations("k", 1))
	assert.False(t, c.SatisfiedExpectations("k"), "the re-Set record is live again")
	c.EvictExpired()
	assert.Len(t, logs.matching("expired before"), 1)
}

// TestSweepPacedByResets pins that lock-free re-Sets of one record, which
// take no shard lock, still drive the eviction sweep, and that a sweep step
// skipping a shard with nothing expired does not skip an expiry.
func TestSweepPacedByResets(t *testing.T) {
	c, clk, _ := newTestCache(t, time.Minute)
	for i := range 500 {
		require.NoError(t, c.ExpectCreations(keyN(i), 1))
	}
	require.NoError(t, c.ExpectCreations("hot", 1))
	clk.Step(time.Second)
	// Sweeps before anything expires complete passes that spare every
	// record and let later steps skip the shards until the oldest record
	// can expire; they must not skip past it.
	for range 20_000 {
		require.NoError(t, c.ExpectCreations("hot", 1))
	}
	require.Equal(t, 501, c.Len(), "no live record is swept")
	clk.Step(time.Minute - time.Second + time.Nanosecond)
	// How many resets a full sweep takes depends on how the keys hash into
	// shards (the seed differs per process) and a shard may be reached one
	// pass late, so the bound is generous; what matters is that resets alone
	// get there.
	resets := 0
	for ; resets < 400_000 && c.Len() > 1; resets++ {
		require.NoError(t, c.ExpectCreations("hot", 1))
	}
	assert.Equal(t, 1, c.Len(), "every expired record is swept, after %d resets", resets)
}

// TestRecordLayout pins the padding that keeps records and shards on cache
// lines of their own.
func TestRecordLayout(t *testing.T) {
	assert.Equal(t, uintptr(128), unsafe.Sizeof(ControlleeExpectations{}))
	assert.Equal(t, uintptr(128), unsafe.Sizeof(shard{}))
	assert.LessOrEqual(t, unsafe.Offsetof(ControlleeExpectations{}.resets)+4, uintptr(64),
		"the hot fields fit the first cache line")
}
