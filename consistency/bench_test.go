package consistency

import (
	"fmt"
	"sync/atomic"
	"testing"
)

type benchStore struct{ rv string }

func (s *benchStore) LastStoreSyncResourceVersion() string { return s.rv }

func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns/owner-%d@uid-%d", i, i)
	}
	return keys
}

// BenchmarkGuardWriteCheck is two read-your-writes cycles: a write the store
// already has, checked ready (which drops the record), then a write the
// store has not seen, checked stale, and the owner's Clear. One op is all
// five calls over 1,000 owners from parallel goroutines.
func BenchmarkGuardWriteCheck(b *testing.B) {
	keys := benchKeys(1000)
	g := NewGuard(WithStore(podsGR, &benchStore{rv: "100"}))
	var start atomic.Uint64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := int(start.Add(337))
		for pb.Next() {
			key := keys[i%len(keys)]
			i++
			// Other goroutines may touch the same owner in between, so
			// the answers are not asserted here; the tests do that.
			g.WroteAt(key, podsGR, "100")
			_ = g.EnsureReady(key)
			g.WroteAt(key, podsGR, "101")
			_ = g.EnsureReady(key)
			g.Clear(key)
		}
	})
}

// BenchmarkGuardReadyNoRecord is the common case: the owner has no pending
// write, so the check is one map miss.
func BenchmarkGuardReadyNoRecord(b *testing.B) {
	keys := benchKeys(1000)
	g := NewGuard(WithStore(podsGR, &benchStore{rv: "100"}))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := g.EnsureReady(keys[i%len(keys)]); err != nil {
			b.Fatal(err)
		}
	}
}
