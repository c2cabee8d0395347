package expectations

import (
	"strconv"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = OwnerKey("default", "rs-"+strconv.Itoa(i), types.UID("uid-"+strconv.Itoa(i)))
	}
	return keys
}

// BenchmarkExpectCreateObserveSatisfied is the hot path of a ReplicaSet-style
// controller: a sync expects a creation, the informer observes it, and the
// next sync checks the owner. One op is all three calls, spread over 1,000
// owners from parallel goroutines. The e2e module runs the same pattern
// against upstream's ControllerExpectations for the side-by-side ratio.
func BenchmarkExpectCreateObserveSatisfied(b *testing.B) {
	keys := benchKeys(1000)
	c := NewControllerExpectations()
	var start atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		// Each goroutine walks the keys from its own offset so goroutines
		// mostly touch different owners, as distinct workers do.
		i := int(start.Add(337))
		satisfied := 0
		for pb.Next() {
			key := keys[i%len(keys)]
			i++
			if err := c.ExpectCreations(key, 1); err != nil {
				b.Fatal(err)
			}
			c.CreationObserved(key)
			// Another goroutine may have re-Set the same key in between,
			// so the answer is legitimately either; it is counted only to
			// keep the call from being optimised away.
			if c.SatisfiedExpectations(key) {
				satisfied++
			}
		}
		benchSink.Add(int64(satisfied))
	})
}

var benchSink atomic.Int64

// BenchmarkSatisfiedExpectationsPending measures the read that every sync
// makes while a record is still waiting (the clock is consulted).
func BenchmarkSatisfiedExpectationsPending(b *testing.B) {
	keys := benchKeys(1000)
	c := NewControllerExpectations()
	for _, k := range keys {
		if err := c.ExpectCreations(k, 5); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if c.SatisfiedExpectations(keys[i%len(keys)]) {
				b.Fatal("pending record reported satisfied")
			}
			i++
		}
	})
}

// BenchmarkUIDTrackingDeletions measures expecting three deletions and
// observing each twice (graceful update plus final delete).
func BenchmarkUIDTrackingDeletions(b *testing.B) {
	keys := benchKeys(1000)
	pods := []string{"default/a", "default/b", "default/c"}
	u := NewUIDTrackingControllerExpectations(NewControllerExpectations())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		key := keys[i%len(keys)]
		if err := u.ExpectDeletions(key, pods); err != nil {
			b.Fatal(err)
		}
		for _, p := range pods {
			u.DeletionObserved(key, p)
			u.DeletionObserved(key, p)
		}
		if !u.SatisfiedExpectations(key) {
			b.Fatal("not satisfied")
		}
	}
}
