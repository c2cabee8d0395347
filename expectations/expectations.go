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
	// GetExpectations returns the record for key, whether it exists, and a
	// store error (never non-nil for ControllerExpectations).
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
// As upstream, the two counters are updated independently, each atomically.
type ControlleeExpectations struct {
	// add and del are read and written with sync/atomic once the record
	// is stored, except that the cache sets them with plain writes under
	// its lock, in the literal that builds a record or when it resets an
	// unshared record in place. As the first words of an allocated struct
	// they are 64-bit aligned on 32-bit platforms too.
	add, del int64
	key      string
	// epoch points at the owning cache's epoch; setAt is when the record
	// was set, as an offset from it, written under the cache's lock.
	epoch *time.Time
	setAt time.Duration
	// names holds the creation names still expected, for a record set by
	// ExpectCreationsNamed; nil otherwise. Guarded by the cache's lock.
	names map[string]struct{}
	// lifetime identifies the span during which key had a live record:
	// re-Setting a live record keeps it, and a record set after the key was
	// deleted or expired gets a new one. Dependent-key sets of
	// UIDTrackingControllerExpectations live exactly as long.
	lifetime uint64
	// shared is set once GetExpectations has handed the record out. The
	// cache then never resets it in place: a caller keeping it sees what
	// upstream's caller sees, a record a later Set replaces. Guarded by
	// the cache's lock.
	shared bool
}

// Add adds the deltas to the counters; negative deltas lower them. A counter
// saturates at the int64 limits instead of wrapping around: upstream's
// RaiseExpectations by a huge count wraps to a negative one and reports the
// owner satisfied.
func (e *ControlleeExpectations) Add(add, del int64) {
	// An observation moves one counter; skipping the other's update by
	// zero changes nothing a reader can see.
	if add != 0 {
		addSaturating(&e.add, add)
	}
	if del != 0 {
		addSaturating(&e.del, del)
	}
}

// addSaturating adds delta to *counter atomically, clamping the sum to the
// int64 range. Callers of GetExpectations may add without the cache's lock,
// hence the compare-and-swap loop rather than a check and an add.
func addSaturating(counter *int64, delta int64) {
	for {
		old := atomic.LoadInt64(counter)
		sum := old + delta
		switch {
		case delta > 0 && sum < old:
			sum = math.MaxInt64
		case delta < 0 && sum > old:
			sum = math.MinInt64
		}
		if atomic.CompareAndSwapInt64(counter, old, sum) {
			return
		}
	}
}

// Fulfilled reports whether no creation and no deletion is outstanding
// (add <= 0 and del <= 0).
func (e *ControlleeExpectations) Fulfilled() bool {
	return atomic.LoadInt64(&e.add) <= 0 && atomic.LoadInt64(&e.del) <= 0
}

// GetExpectations returns the outstanding (add, del) counts.
func (e *ControlleeExpectations) GetExpectations() (int64, int64) {
	return atomic.LoadInt64(&e.add), atomic.LoadInt64(&e.del)
}

// Key returns the key the record was stored under.
func (e *ControlleeExpectations) Key() string { return e.key }

// Timestamp returns when the record was set; expiry is measured from it.
func (e *ControlleeExpectations) Timestamp() time.Time { return e.epoch.Add(e.setAt) }

// MarshalLog gives logr a snapshot instead of letting it reflect over the
// atomics.
func (e *ControlleeExpectations) MarshalLog() any {
	add, del := e.GetExpectations()
	return struct {
		Add int64  `json:"add"`
		Del int64  `json:"del"`
		Key string `json:"key"`
	}{add, del, e.key}
}
