package expectations

import (
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/internal/ttlmap"
)

// UIDTrackingControllerExpectations remembers which dependents an owner
// expects to see deleted, so that each lowers the deletion count at most
// once. Graceful deletion shows a pod twice, first as an update that sets
// its deletionTimestamp and then as the final delete (kubernetes#22143), and
// counting both would release the owner early. Despite the upstream name the
// tracked identities are dependent keys ("namespace/name"), not UIDs.
//
// Over a *ControllerExpectations, a dependent-key set lives as long as the
// wrapped record it was made with: re-Setting that record keeps the set, as
// upstream does, but once the record is deleted or expires the set is gone
// too, so sets never outlive the records the cache evicts. Over any other
// ControllerExpectationsInterface, a set lives until it is replaced or
// deleted, as upstream.
type UIDTrackingControllerExpectations struct {
	// ControllerExpectationsInterface is the wrapped cache. Every method not
	// redefined here passes through to it.
	ControllerExpectationsInterface

	// cache is the wrapped cache when it is a *ControllerExpectations, which
	// can tell a record's lifetime; nil otherwise.
	cache  *ControllerExpectations
	logger logr.Logger

	// mu guards sets and sweep. It is held while the wrapped cache is
	// called, as upstream holds its lock, so an observation never
	// interleaves with the ExpectDeletions it answers.
	mu    sync.Mutex
	sets  map[string]*deleteSet
	sweep ttlmap.Schedule
}

type deleteSet struct {
	keys     sets.Set[string]
	lifetime uint64 // of the wrapped record it was made with
}

// NewUIDTrackingControllerExpectations wraps ce. Logs go to ce's logger when
// ce is a *ControllerExpectations, and to klog.Background() otherwise. A nil
// ce is a programmer error and panics.
func NewUIDTrackingControllerExpectations(ce ControllerExpectationsInterface) *UIDTrackingControllerExpectations {
	if ce == nil {
		panic("expectations: NewUIDTrackingControllerExpectations: nil cache")
	}
	u := &UIDTrackingControllerExpectations{
		ControllerExpectationsInterface: ce,
		logger:                          klog.Background(),
		sets:                            make(map[string]*deleteSet),
		sweep:                           ttlmap.NewSchedule(writesPerRecord),
	}
	if c, ok := ce.(*ControllerExpectations); ok {
		u.cache, u.logger = c, c.logger
	}
	return u
}

// lifetime returns the lifetime of key's live wrapped record; see
// deleteSet. A wrapped cache of another type has one endless lifetime.
func (u *UIDTrackingControllerExpectations) lifetime(key string) (uint64, bool) {
	if u.cache == nil {
		return 0, true
	}
	return u.cache.lifetime(key)
}

// liveSet returns key's set, dropping it if its wrapped record is gone; the
// caller holds mu.
func (u *UIDTrackingControllerExpectations) liveSet(key string) *deleteSet {
	entry := u.sets[key]
	if entry == nil {
		return nil
	}
	if lt, ok := u.lifetime(key); !ok || lt != entry.lifetime {
		delete(u.sets, key)
		return nil
	}
	return entry
}

// GetUIDs returns a copy of the dependent keys key still expects to see
// deleted, or nil when key has no set. Unlike upstream it is a copy, safe to
// read while handlers run.
func (u *UIDTrackingControllerExpectations) GetUIDs(key string) sets.Set[string] {
	u.mu.Lock()
	defer u.mu.Unlock()
	if entry := u.liveSet(key); entry != nil {
		return entry.keys.Clone()
	}
	return nil
}

// ExpectDeletions records that key waits for the deletion of each distinct
// dependent key in deletedKeys (an empty slice expects none, so the record
// is fulfilled at once), replacing any earlier set, and sets the wrapped
// record to (0, distinct count). Replacing a non-empty set is logged as an
// error, as upstream does. It returns the wrapped cache's error.
func (u *UIDTrackingControllerExpectations) ExpectDeletions(key string, deletedKeys []string) error {
	entry := &deleteSet{keys: sets.New(deletedKeys...)}
	u.mu.Lock()
	defer u.mu.Unlock()
	if old := u.liveSet(key); old != nil && old.keys.Len() != 0 {
		u.logger.Error(nil, "Clobbering existing delete keys", "controller", key, "keys", sets.List(old.keys))
	}
	err := u.ControllerExpectationsInterface.ExpectDeletions(key, entry.keys.Len())
	entry.lifetime, _ = u.lifetime(key)
	u.sets[key] = entry
	if u.sweep.Wrote() {
		u.dropVanishedSets()
	}
	return err
}

// dropVanishedSets drops the sets whose wrapped record is gone, and
// schedules the next sweep, at the wrapped cache's rate; the caller holds mu.
func (u *UIDTrackingControllerExpectations) dropVanishedSets() {
	for key := range u.sets {
		u.liveSet(key)
	}
	u.sweep.Swept(len(u.sets))
}

// DeletionObserved records that the dependent deleteKey of key is gone. Only
// a dependent key that key still expects lowers the deletion count, and only
// the first time; anything else is ignored.
func (u *UIDTrackingControllerExpectations) DeletionObserved(key, deleteKey string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	entry := u.liveSet(key)
	if entry == nil || !entry.keys.Has(deleteKey) {
		return
	}
	entry.keys.Delete(deleteKey)
	u.ControllerExpectationsInterface.DeletionObserved(key)
}

// namedCreations is what a wrapped cache needs for creation tracking by
// name; *ControllerExpectations has it.
type namedCreations interface {
	ExpectCreationsNamed(key string, names []string) error
	CreationObservedNamed(key, name string)
}

// ExpectCreationsNamed passes through to the wrapped cache's
// ExpectCreationsNamed (see ControllerExpectations), so one handle tracks
// creations by name and deletions by dependent key. As with ExpectCreations,
// the dependent-key set is left alone. A wrapped cache that cannot track
// names is asked to ExpectCreations the number of distinct names instead.
func (u *UIDTrackingControllerExpectations) ExpectCreationsNamed(key string, names []string) error {
	if n, ok := u.ControllerExpectationsInterface.(namedCreations); ok {
		return n.ExpectCreationsNamed(key, names)
	}
	return u.ControllerExpectationsInterface.ExpectCreations(key, len(sets.New(names...)))
}

// CreationObservedNamed passes through to the wrapped cache's
// CreationObservedNamed; over a cache that cannot track names it is
// CreationObserved, which is what CreationObservedNamed does on a record set
// by counts.
func (u *UIDTrackingControllerExpectations) CreationObservedNamed(key, name string) {
	if n, ok := u.ControllerExpectationsInterface.(namedCreations); ok {
		n.CreationObservedNamed(key, name)
		return
	}
	u.ControllerExpectationsInterface.CreationObserved(key)
}

// pendingReports is what a wrapped cache needs to report pending records;
// *ControllerExpectations has it.
type pendingReports interface {
	Pending(key string) (PendingReport, bool)
	PendingAll() []PendingReport
}

// Pending passes through to the wrapped cache's Pending (see
// ControllerExpectations); PendingDeletions names the dependent keys. A
// wrapped cache that cannot report returns false.
func (u *UIDTrackingControllerExpectations) Pending(key string) (PendingReport, bool) {
	if p, ok := u.ControllerExpectationsInterface.(pendingReports); ok {
		return p.Pending(key)
	}
	return PendingReport{}, false
}

// PendingAll passes through to the wrapped cache's PendingAll; nil for a
// wrapped cache that cannot report.
func (u *UIDTrackingControllerExpectations) PendingAll() []PendingReport {
	if p, ok := u.ControllerExpectationsInterface.(pendingReports); ok {
		return p.PendingAll()
	}
	return nil
}

// DeleteExpectations forgets both the dependent-key set and the wrapped
// record of key.
func (u *UIDTrackingControllerExpectations) DeleteExpectations(key string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.sets, key)
	u.ControllerExpectationsInterface.DeleteExpectations(key)
}

// Len returns how many dependent-key sets are held, including sets whose
// wrapped record is gone but which no call has dropped yet.
func (u *UIDTrackingControllerExpectations) Len() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.sets)
}

// PendingDeletions returns, sorted, the dependent keys key still waits for;
// nil when there are none.
func (u *UIDTrackingControllerExpectations) PendingDeletions(key string) []string {
	s := u.GetUIDs(key)
	if s.Len() == 0 {
		return nil
	}
	return sets.List(s)
}
