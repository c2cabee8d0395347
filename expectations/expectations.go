package expectations

import (
	"math"
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
	// Kept first so that 64-bit atomics stay aligned on 32-bit platforms.
	add atomic.Int64
	del atomic.Int64
	// stamp is when the record was last set, as an offset from epoch. An
	// offset (rather than a time.Time) can be reset atomically, which lets a
	// re-Set reuse the record without allocating, and with the real clock it
	// is read from the monotonic clock alone, which is cheaper than Now.
	stamp atomic.Int64

	key   string
	hash  uint64    // of key; picks the shard and the table slot
	epoch time.Time // the owning cache's epoch; never changes

	// names holds the expected creation names (nil when not tracking
	// names). It is only touched under the lock of the record's shard.
	names map[string]struct{}
}

// Add adds the deltas to the counters; negative deltas lower them. A nil
// record ignores the call.
func (e *ControlleeExpectations) Add(add, del int64) {
	if e == nil {
		return
	}
	e.add.Add(add)
	e.del.Add(del)
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
	return e.epoch.Add(time.Duration(e.stamp.Load()))
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

// age is how long before now (an offset from epoch) the record was set.
func (e *ControlleeExpectations) age(now time.Duration) time.Duration {
	return now - time.Duration(e.stamp.Load())
}

// expired applies upstream's rule: strictly older than the TTL.
func (e *ControlleeExpectations) expired(now, ttl time.Duration) bool {
	return e.age(now) > ttl
}

// deadStamp marks a record that has been removed from its shard. It reads as
// expired by about 146 years, so a lock-free reader still holding the record
// treats it as absent, and it is far enough from the int64 limits that age
// cannot overflow.
const deadStamp = math.MinInt64 / 2

// claimExpired marks an expired record dead, failing if it is not expired.
// The caller holds the shard lock, which every re-Set also takes, and removes
// the record from the table on success.
func (e *ControlleeExpectations) claimExpired(now, ttl time.Duration) bool {
	old := e.stamp.Load()
	if old == deadStamp || now-time.Duration(old) <= ttl {
		return false
	}
	return e.stamp.CompareAndSwap(old, deadStamp)
}
