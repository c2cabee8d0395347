package expectations

import (
	"sync"
	"sync/atomic"
	"time"
)

// The record index is a hand-rolled open-addressing hash table per shard,
// built for this cache's access pattern: three lookups for every write, and
// lookups from informer handlers on every event. Readers take no lock and
// hash the key once: they load the shard's current table and probe slots
// that are updated atomically. Writers hold the shard's mutex, and replace
// the whole table when it must grow, shrink or shed tombstones; a reader
// still probing the old table sees it as it was at the swap, which is a
// consistent earlier state.

// tombstone marks a deleted slot; probes continue past it.
var tombstone = &ControlleeExpectations{}

const minTableSize = 8

type table struct {
	slots []atomic.Pointer[ControlleeExpectations]
	mask  uint64
}

func newTable(size int) *table {
	n := minTableSize
	for n < size {
		n <<= 1
	}
	return &table{slots: make([]atomic.Pointer[ControlleeExpectations], n), mask: uint64(n - 1)}
}

type shard struct {
	// tab is read by every lookup and written only when the table is
	// replaced, so it gets a cache line of its own: the lock's line changes
	// hands on every locked write, and lookups sharing it would miss too.
	tab atomic.Pointer[table]
	// sweepAfter is a lower bound on when the shard's first record can
	// expire, set when a sweep completes a pass. Until then sweep steps
	// skip the shard without locking it or reading its records, which
	// would otherwise drag lines that other cores are writing.
	sweepAfter atomic.Int64
	_          [48]byte

	mu sync.Mutex
	// live counts records; used counts records plus tombstones. Both are
	// guarded by mu.
	live, used int
	// cursor is the sweep's next slot; writes counts writes for the sweep's
	// pacing. Both are guarded by mu.
	cursor int
	writes uint32
	// passStart and passMin track the sweep pass in progress: when it
	// started and the oldest stamp it has seen. Guarded by mu.
	passStart, passMin time.Duration
	// Padding rounds the shard to two full cache lines.
	_ [8]byte
}

// get finds key without locking. The table is never more than half used,
// so every probe meets an empty slot.
func (s *shard) get(key string, h uint64) *ControlleeExpectations {
	t := s.tab.Load()
	if t == nil {
		return nil
	}
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		r := t.slots[i].Load()
		if r == nil {
			return nil
		}
		if r != tombstone && r.hash == h && r.key == key {
			return r
		}
	}
}

// insert adds rec, whose key is absent; the caller holds mu.
func (s *shard) insert(rec *ControlleeExpectations) {
	t := s.tab.Load()
	if t == nil || 2*(s.used+1) > len(t.slots) {
		t = s.rebuild(2 * (s.live + 1))
	}
	for i := rec.hash & t.mask; ; i = (i + 1) & t.mask {
		switch t.slots[i].Load() {
		case nil:
			s.used++
			t.slots[i].Store(rec)
			s.live++
			return
		case tombstone:
			t.slots[i].Store(rec)
			s.live++
			return
		}
	}
}

// delete removes rec if it is present; the caller holds mu.
func (s *shard) delete(rec *ControlleeExpectations) bool {
	t := s.tab.Load()
	if t == nil {
		return false
	}
	for i := rec.hash & t.mask; ; i = (i + 1) & t.mask {
		switch r := t.slots[i].Load(); r {
		case nil:
			return false
		case rec:
			t.slots[i].Store(tombstone)
			s.live--
			return true
		}
	}
}

// maybeShrink gives memory back once a shard holds far fewer records than
// its table was sized for; the caller holds mu.
func (s *shard) maybeShrink() {
	if t := s.tab.Load(); t != nil && len(t.slots) > 64 && 8*s.live < len(t.slots) {
		s.rebuild(2 * s.live)
	}
}

// rebuild publishes a fresh table of at least size slots holding the live
// records and no tombstones; the caller holds mu.
func (s *shard) rebuild(size int) *table {
	nt := newTable(size)
	if old := s.tab.Load(); old != nil {
		for i := range old.slots {
			r := old.slots[i].Load()
			if r == nil || r == tombstone {
				continue
			}
			j := r.hash & nt.mask
			for nt.slots[j].Load() != nil {
				j = (j + 1) & nt.mask
			}
			nt.slots[j].Store(r)
		}
	}
	s.used, s.cursor = s.live, 0
	s.tab.Store(nt)
	return nt
}

// each calls fn for every record; the caller holds mu and fn must not
// insert or delete.
func (s *shard) each(fn func(*ControlleeExpectations)) {
	t := s.tab.Load()
	if t == nil {
		return
	}
	for i := range t.slots {
		if r := t.slots[i].Load(); r != nil && r != tombstone {
			fn(r)
		}
	}
}
