package ttlmap

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"
)

type entry struct{ at time.Duration }

func newTable(perEntry int) Table[string, *entry] {
	return New[string](time.Minute, perEntry, func(e *entry) time.Duration { return e.at })
}

func TestLookupEvictsStrictlyOlderThanTTL(t *testing.T) {
	tb := newTable(1)
	tb.Put("a", &entry{at: 0})
	_, st := tb.Lookup("a", time.Minute)
	assert.Equal(t, Live, st, "exactly the TTL old is still live")
	e, st := tb.Lookup("a", time.Minute+1)
	assert.Equal(t, Expired, st)
	assert.Equal(t, time.Duration(0), e.at, "the expired entry is handed back")
	_, st = tb.Lookup("a", 0)
	assert.Equal(t, Absent, st, "and removed")
	assert.Zero(t, tb.Len())
}

func TestSweepSchedule(t *testing.T) {
	for _, perEntry := range []int{1, 4} {
		tb := newTable(perEntry)
		writes := 0
		for !tb.Wrote() {
			writes++
		}
		assert.Equal(t, minSweep-1, writes, "the first sweep comes after minSweep writes")
		for i := range 100 {
			tb.Put(string(rune('a'+i%26))+string(rune('a'+i/26)), &entry{at: time.Duration(i % 2)})
		}
		var evicted []string
		removed := tb.Sweep(time.Minute+1, func(k string, _ *entry) { evicted = append(evicted, k) })
		assert.Equal(t, 50, removed)
		assert.Len(t, evicted, 50)
		require.Equal(t, 50, tb.Len())
		writes = 1
		for !tb.Wrote() {
			writes++
		}
		assert.Equal(t, max(perEntry*50, minSweep), writes)
	}
}

func TestClockOffsets(t *testing.T) {
	fc := clocktesting.NewFakePassiveClock(time.Unix(100, 0))
	c := NewClock(fc)
	assert.Zero(t, c.Now())
	fc.SetTime(time.Unix(103, 0))
	assert.Equal(t, 3*time.Second, c.Now())
	assert.Equal(t, time.Unix(103, 0), c.Epoch.Add(c.Now()))
}

func TestAllSeesEveryEntry(t *testing.T) {
	tb := newTable(4)
	tb.Put("a", &entry{})
	tb.Put("b", &entry{})
	tb.Delete("b")
	n := 0
	for k := range tb.All() {
		assert.Equal(t, "a", k)
		n++
	}
	assert.Equal(t, 1, n)
	_, ok := tb.Get("a")
	assert.True(t, ok)
	assert.Equal(t, time.Minute, tb.TTL())
}
