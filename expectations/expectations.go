package expectations

import (
	"math"
	"runtime"
	"sync/atomic"
	"time"
)

// ExpectationsTimeout is how long a record may wait for its observations
// before SatisfiedExpectations stops trusting it. It matches upstream, so a
// controller migrated to ctrlkit resyncs a stalled owner after the same delay.
const ExpectationsTimeout = 5 * time.Minute

// ControllerExpectationsInterface is the contract a controller programs
// against. It keeps upstream's method set minus the logger argument, so code
// copied from k8s.io/kubernetes/pkg/controller migrates by dropping that
// argument.
//
// Keys are opaque strings. Do not share one instance between controllers of
// different kinds when keys are namespace/name: two kinds may own objects with
// the same name. Prefer OwnerKey, which also binds a record to the owner's UID.
type ControllerExpectationsInterface interface {
	// GetExpectations returns the live record for key, whether it exists,
	// and a store error (never non-nil for ControllerExpectations).
	GetExpectations(key string) (*ControlleeExpectations, bool, error)
	// SatisfiedExpectations reports whether the owner may be synced.
	SatisfiedExpectations(key string) bool
	// DeleteExpectations forgets the record for key.
	DeleteExpectations(key string)
	// SetExpectations replaces the record for key with fresh counts.
	SetExpectations(key string, add, del int) error
	// ExpectCreations is SetExpectations(key, adds, 0).
	ExpectCreations(key string, adds int) error
	// ExpectDeletions is SetExpectations(key, 0, dels).
	ExpectDeletions(key string, dels int) error
	// CreationObserved lowers the add count of an existing record by one.
	CreationObserved(key string)
	// DeletionObserved lowers the del count of an existing record by one.
	DeletionObserved(key string)
	// RaiseExpectations adds to the counts of an existing record.
	RaiseExpectations(key string, add, del int)
	// LowerExpectations subtracts from the counts of an existing record.
	LowerExpectations(key string, add, del int)
}

// ControlleeExpectations is one owner's record: how many creations and
// deletions it still waits for. The counters are signed and may go below zero:
// observing more than was expected simply means the expectation is met.
//
// The two counters are updated independently (each atomically), exactly as
// upstream does; a reader may see one update of a pair before the other.
type ControlleeExpectations struct {
	// The fields every hot call touches (the counters, the stamp, and what
	// a lookup compares) come first and fit one
	// 64-byte cache line, so a Set, an observation and a check each touch
	// one line. The atomics are first so they stay 64-bit aligned on 32-bit
	// platforms.
	add atomic.Int64
	del atomic.Int64
	// stamp is when the record was last set, as an offset from epoch. An
	// offset (rather than a time.Time) can be reset atomically, which lets a
	// re-Set reuse the record without allocating, and with the real clock it
	// is read from the monotonic clock alone, which is cheaper than Now.
	// It is also the record's re-Set lock (see busyStamp).
	stamp atomic.Int64

	hash uint64 // of key; picks the shard and the table slot
	key  string
	// resets counts re-Sets, guarded by the busy stamp; it paces the eviction
	// sweep without a counter shared between cores.
	resets uint32

	epoch time.Time // the owning cache's epoch; never changes

	// names holds the expected creation names (nil when not tracking
	// names). The field is assigned only while holding both the shard lock
	// and the busy stamp, so either makes it stable; the map's contents are only
	// touched under the shard lock.
	names map[string]struct{}

	// Records are padded to 128 bytes, a multiple of the cache line, so two
	// owners synced on different cores never share a line (false sharing
	// between neighbouring records cost about a fifth of the parallel time).
	_ [40]byte
}

// Add adds the deltas to the counters; negative deltas lower them. A nil
// record ignores the call.
func (e *ControlleeExpectations) Add(add, del int64) {
	if e == nil {
		return
	}
	// A zero delta is skipped: each atomic add is a locked instruction, and
	// the common observations change only one counter.
	if add != 0 {
		e.add.Add(add)
	}
	if del != 0 {
		e.del.Add(del)
	}
}

// Fulfilled reports whether no creation and no deletion is outstanding
// (add <= 0 and del <= 0). A nil record is fulfilled: it expects nothing.
func (e *ControlleeExpectations) Fulfilled() bool {
	if e == nil {
		return true
	}
	return e.add.Load() <= 0 && e.del.Load() <= 0
}

// GetExpectations returns the outstanding (add, del) counts. A nil record
// returns (0, 0).
func (e *ControlleeExpectations) GetExpectations() (int64, int64) {
	if e == nil {
		return 0, 0
	}
	return e.add.Load(), e.del.Load()
}

// Key returns the key the record was stored under ("" for a nil record).
func (e *ControlleeExpectations) Key() string {
	if e == nil {
		return ""
	}
	return e.key
}

// Timestamp returns when the record was last set; expiry is measured from
// it. A nil record returns the zero time.
func (e *ControlleeExpectations) Timestamp() time.Time {
	if e == nil {
		return time.Time{}
	}
	return e.epoch.Add(time.Duration(e.loadStamp()))
}

// MarshalLog gives logr a consistent-enough snapshot instead of letting it
// reflect over the atomics.
func (e *ControlleeExpectations) MarshalLog() any {
	add, del := e.GetExpectations()
	return struct {
		Add int64  `json:"add"`
		Del int64  `json:"del"`
		Key string `json:"key"`
	}{add, del, e.Key()}
}

// loadStamp returns the stamp, waiting out a re-Set in progress: the busy
// marker is not a time. The wait is a few stores long, because the holder
// calls no user code and takes no lock while it holds the marker.
func (e *ControlleeExpectations) loadStamp() int64 {
	for {
		if st := e.stamp.Load(); st != busyStamp {
			return st
		}
		runtime.Gosched()
	}
}

// age is how long before now (an offset from epoch) the record was set.
func (e *ControlleeExpectations) age(now time.Duration) time.Duration {
	return now - time.Duration(e.loadStamp())
}

// expired applies upstream's rule: strictly older than the TTL. It does not
// wait for a re-Set in progress: the busy marker lies in the far future, so
// such a record reads as live, which is what the re-Set is making it.
func (e *ControlleeExpectations) expired(now, ttl time.Duration) bool {
	return now-time.Duration(e.stamp.Load()) > ttl
}

// deadStamp marks a record that has been removed from its shard. It reads as
// expired by about 146 years, so a lock-free reader still holding the record
// treats it as absent, and it is far enough from the int64 limits that age
// cannot overflow.
const deadStamp = math.MinInt64 / 2

// busyStamp marks a record being re-Set: the stamp doubles as the record's
// lock, so a re-Set costs one compare-and-swap to take it and the store of
// the new stamp to release it, instead of a mutex on top of both. It reads
// as set about 146 years in the future, hence live, to lock-free readers.
const busyStamp = math.MaxInt64 / 2

// acquire takes the record for a re-Set by swapping in busyStamp, waiting
// out another re-Set in progress. It returns the previous stamp, or false
// when the record is dead (removed from its shard), in which case nothing is
// held. The holder releases by storing a stamp.
func (e *ControlleeExpectations) acquire() (int64, bool) {
	for {
		switch st := e.stamp.Load(); st {
		case deadStamp:
			return st, false
		case busyStamp:
			runtime.Gosched()
		default:
			if e.stamp.CompareAndSwap(st, busyStamp) {
				return st, true
			}
		}
	}
}

// kill marks the record dead for DeleteExpectations, waiting out a re-Set in
// progress so that its releasing store cannot revive a removed record. The
// caller holds the shard lock and removes the record from the table.
func (e *ControlleeExpectations) kill() {
	for {
		st := e.stamp.Load()
		if st == busyStamp {
			runtime.Gosched()
			continue
		}
		if e.stamp.CompareAndSwap(st, deadStamp) {
			return
		}
	}
}

// claimExpired marks an expired record dead, failing if it is not expired.
// The caller holds the shard lock, which every re-Set also takes, and removes
// the record from the table on success. A record being re-Set (busyStamp)
// reads as not expired.
func (e *ControlleeExpectations) claimExpired(now, ttl time.Duration) bool {
	old := e.stamp.Load()
	if old == deadStamp || old == busyStamp || now-time.Duration(old) <= ttl {
		return false
	}
	return e.stamp.CompareAndSwap(old, deadStamp)
}
