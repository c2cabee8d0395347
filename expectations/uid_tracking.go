package expectations

import (
	"sort"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
)

// UIDTrackingControllerExpectations remembers which dependents an owner
// expects to see deleted, so that each lowers the deletion count at most
// once. Graceful deletion shows a pod twice, first as an update that sets
// its deletionTimestamp and then as the final delete (kubernetes#22143), and
// counting both would release the owner early. Despite the upstream name the
// tracked identities are dependent keys ("namespace/name"), not UIDs.
//
// Calls into the wrapped ControllerExpectationsInterface are made with no
// lock of this type held, unlike upstream. An observation that races with
// ExpectDeletions on the same owner is held back and applied after the new
// count is in place, so it is neither lost nor applied to the old record.
// Two concurrent ExpectDeletions calls on one owner (which a workqueue never
// makes) leave the count of whichever reached the wrapped cache last.
type UIDTrackingControllerExpectations struct {
	// ControllerExpectationsInterface is the wrapped cache. Every method not
	// redefined here passes through to it.
	ControllerExpectationsInterface

	logger logr.Logger
	mu     sync.Mutex
	sets   map[string]*uidSet
	writes uint32
}

type uidSet struct {
	keys sets.Set[string]
	// applying is true while ExpectDeletions is installing the count in the
	// wrapped cache; observations in that window are counted in early.
	applying bool
	early    int
}

// NewUIDTrackingControllerExpectations wraps ce. A nil ce is replaced by
// NewControllerExpectations(). Logs go to ce's logger when ce is a
// *ControllerExpectations, and to klog.Background() otherwise.
func NewUIDTrackingControllerExpectations(ce ControllerExpectationsInterface) *UIDTrackingControllerExpectations {
	logger := klog.Background()
	switch c := ce.(type) {
	case nil:
		ce = NewControllerExpectations()
	case *ControllerExpectations:
		if c == nil {
			ce = NewControllerExpectations()
		} else {
			logger = c.logger
		}
	}
	return &UIDTrackingControllerExpectations{
		ControllerExpectationsInterface: ce,
		logger:                          logger,
		sets:                            make(map[string]*uidSet),
	}
}

func (u *UIDTrackingControllerExpectations) usable() bool {
	return u != nil && u.ControllerExpectationsInterface != nil
}

// GetUIDs returns a copy of the dependent keys key still expects to see
// deleted, or nil when key has no set. Unlike upstream, it is a copy, safe to
// read while handlers run; and a set whose record is gone from the wrapped
// cache (expired or deleted) is dropped and reported as nil.
func (u *UIDTrackingControllerExpectations) GetUIDs(key string) sets.Set[string] {
	if !u.usable() {
		return nil
	}
	u.mu.Lock()
	entry := u.sets[key]
	var out sets.Set[string]
	if entry != nil {
		out = entry.keys.Clone()
	}
	u.mu.Unlock()
	if entry == nil {
		return nil
	}
	if _, exists, err := u.ControllerExpectationsInterface.GetExpectations(key); err == nil && !exists {
		u.dropIfStale(key, entry)
		return nil
	}
	return out
}

// dropIfStale removes entry if nothing replaced it meanwhile.
func (u *UIDTrackingControllerExpectations) dropIfStale(key string, entry *uidSet) {
	u.mu.Lock()
	if u.sets[key] == entry && !entry.applying {
		delete(u.sets, key)
	}
	u.mu.Unlock()
}

// ExpectDeletions records that key waits for the deletion of each distinct
// dependent key in deletedKeys (a nil or empty slice expects none, so the
// record is fulfilled at once), replacing any earlier set, and sets the
// wrapped record to (0, distinct count). Replacing a non-empty set is logged
// as an error, as upstream does. It returns the wrapped cache's error.
func (u *UIDTrackingControllerExpectations) ExpectDeletions(key string, deletedKeys []string) error {
	if !u.usable() {
		return ErrNilExpectations
	}
	entry := &uidSet{keys: sets.New(deletedKeys...), applying: true}
	// Counted before publishing: once in the map, the set is only read under
	// u.mu, since observations shrink it.
	want := entry.keys.Len()

	u.mu.Lock()
	var clobbered []string
	if old := u.sets[key]; old != nil && old.keys.Len() != 0 {
		clobbered = sets.List(old.keys)
	}
	if u.sets == nil {
		u.sets = make(map[string]*uidSet)
	}
	u.sets[key] = entry
	candidates := u.sweepCandidates(key)
	u.mu.Unlock()

	if clobbered != nil {
		u.logger.Error(nil, "Clobbering existing delete keys", "controller", key, "keys", clobbered)
	}
	err := u.ControllerExpectationsInterface.ExpectDeletions(key, want)

	u.mu.Lock()
	early := entry.early
	entry.early, entry.applying = 0, false
	current := u.sets[key] == entry
	u.mu.Unlock()

	if err == nil && current {
		for range early {
			u.ControllerExpectationsInterface.DeletionObserved(key)
		}
	}
	u.sweep(candidates)
	return err
}

// sweepCandidates picks, every sweepEvery writes, up to sweepBatch other
// keys whose record may be gone; the caller holds u.mu. Map iteration starts
// at a random point, so repeated sweeps cover the whole map.
func (u *UIDTrackingControllerExpectations) sweepCandidates(skip string) map[string]*uidSet {
	u.writes++
	if u.writes%sweepEvery != 0 || len(u.sets) <= 1 {
		return nil
	}
	out := make(map[string]*uidSet, sweepBatch)
	for k, e := range u.sets {
		if len(out) == sweepBatch {
			break
		}
		if k != skip && !e.applying {
			out[k] = e
		}
	}
	return out
}

// sweep drops the candidates whose wrapped record no longer exists. The
// wrapped cache is asked without u.mu held.
func (u *UIDTrackingControllerExpectations) sweep(candidates map[string]*uidSet) {
	for k, e := range candidates {
		if _, exists, err := u.ControllerExpectationsInterface.GetExpectations(k); err == nil && !exists {
			u.dropIfStale(k, e)
		}
	}
}

// DeletionObserved records that the dependent deleteKey of key is gone. Only
// a dependent key that key still expects lowers the deletion count, and only
// the first time; anything else is ignored.
func (u *UIDTrackingControllerExpectations) DeletionObserved(key, deleteKey string) {
	if !u.usable() {
		return
	}
	u.mu.Lock()
	entry := u.sets[key]
	if entry == nil || !entry.keys.Has(deleteKey) {
		u.mu.Unlock()
		return
	}
	entry.keys.Delete(deleteKey)
	if entry.applying {
		entry.early++
		u.mu.Unlock()
		return
	}
	u.mu.Unlock()
	u.ControllerExpectationsInterface.DeletionObserved(key)
}

// DeleteExpectations forgets both the dependent-key set and the wrapped
// record of key.
func (u *UIDTrackingControllerExpectations) DeleteExpectations(key string) {
	if !u.usable() {
		return
	}
	u.mu.Lock()
	delete(u.sets, key)
	u.mu.Unlock()
	u.ControllerExpectationsInterface.DeleteExpectations(key)
}

// Len returns how many dependent-key sets are held.
func (u *UIDTrackingControllerExpectations) Len() int {
	if u == nil {
		return 0
	}
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
	out := s.UnsortedList()
	sort.Strings(out)
	return out
}

// The methods below pass through to the wrapped cache; they are spelled out
// only so that a zero or nil UIDTrackingControllerExpectations answers with
// neutral values instead of a nil-interface panic.

// GetExpectations passes through; (nil, false, ErrNilExpectations) when unusable.
func (u *UIDTrackingControllerExpectations) GetExpectations(key string) (*ControlleeExpectations, bool, error) {
	if !u.usable() {
		return nil, false, ErrNilExpectations
	}
	return u.ControllerExpectationsInterface.GetExpectations(key)
}

// SatisfiedExpectations passes through; true when unusable.
func (u *UIDTrackingControllerExpectations) SatisfiedExpectations(key string) bool {
	if !u.usable() {
		return true
	}
	return u.ControllerExpectationsInterface.SatisfiedExpectations(key)
}

// SetExpectations passes through; ErrNilExpectations when unusable. It does
// not touch the dependent-key set, as upstream.
func (u *UIDTrackingControllerExpectations) SetExpectations(key string, add, del int) error {
	if !u.usable() {
		return ErrNilExpectations
	}
	return u.ControllerExpectationsInterface.SetExpectations(key, add, del)
}

// ExpectCreations passes through; ErrNilExpectations when unusable.
func (u *UIDTrackingControllerExpectations) ExpectCreations(key string, adds int) error {
	if !u.usable() {
		return ErrNilExpectations
	}
	return u.ControllerExpectationsInterface.ExpectCreations(key, adds)
}

// CreationObserved passes through; no-op when unusable.
func (u *UIDTrackingControllerExpectations) CreationObserved(key string) {
	if u.usable() {
		u.ControllerExpectationsInterface.CreationObserved(key)
	}
}

// RaiseExpectations passes through; no-op when unusable.
func (u *UIDTrackingControllerExpectations) RaiseExpectations(key string, add, del int) {
	if u.usable() {
		u.ControllerExpectationsInterface.RaiseExpectations(key, add, del)
	}
}

// LowerExpectations passes through; no-op when unusable.
func (u *UIDTrackingControllerExpectations) LowerExpectations(key string, add, del int) {
	if u.usable() {
		u.ControllerExpectationsInterface.LowerExpectations(key, add, del)
	}
}
