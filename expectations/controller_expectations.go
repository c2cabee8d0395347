package expectations

import (
	"errors"
	"fmt"
	"hash/maphash"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
)

// ErrNilExpectations is returned by the writing methods of a nil
// *ControllerExpectations or of an unconstructed
// UIDTrackingControllerExpectations. Reading methods of a nil cache behave as an empty
// cache, so a controller that forgot to construct one fails loudly on its
// first Expect call rather than panicking inside an informer handler.
var ErrNilExpectations = errors.New("expectations: method called on a nil expectations cache")

// Sharding keeps a hot owner from serialising every other owner behind one
// lock; 64 shards is far more than the cores a controller manager gets.
const numShards = 64

// Every sweepEvery writes to a shard, the shard examines up to sweepBatch
// records for expiry. That is two records per write on average, so a shard
// holding n expired records is clean after about n/2 further writes, and no
// single write pays for more than sweepBatch checks.
const (
	sweepEvery = 16
	sweepBatch = 32
)

// A shard whose slice capacity has fallen to a quarter of its peak is rebuilt
// so that a burst of 100,000 owners does not pin its buckets forever (Go maps
// never shrink on their own).
const shrinkMinCap = 256

var hashSeed = maphash.MakeSeed()

// ControllerExpectations is a sharded TTL cache of ControlleeExpectations.
// Construct it with NewControllerExpectations. The zero value is also usable:
// real clock, ExpectationsTimeout, and no logging.
//
// It runs no goroutine. Expired records are evicted when they are touched and
// by a small sweep that rides on writes, so memory follows live owners.
type ControllerExpectations struct {
	ttl    time.Duration
	clock  clock.PassiveClock
	logger logr.Logger
	// epoch is the clock's reading at construction; record times are
	// offsets from it (see ControlleeExpectations.stamp).
	epoch  time.Time
	shards [numShards]shard
}

type shard struct {
	mu sync.RWMutex
	// recs maps key to the current record; order holds the same records so
	// the sweep can resume where it stopped, which a map range cannot do.
	recs   map[string]*ControlleeExpectations
	order  []*ControlleeExpectations
	cursor int
	writes uint32
	// Padding keeps neighbouring shards' locks off one cache line.
	_ [64]byte
}

var _ ControllerExpectationsInterface = (*ControllerExpectations)(nil)

// NewControllerExpectations returns an empty cache.
func NewControllerExpectations(opts ...Option) *ControllerExpectations {
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return &ControllerExpectations{ttl: cfg.ttl, clock: cfg.clock, logger: cfg.logger, epoch: cfg.clock.Now()}
}

// unixEpoch anchors the zero-value cache, whose epoch is unset.
var unixEpoch = time.Unix(0, 0)

func (c *ControllerExpectations) base() time.Time {
	if c.epoch.IsZero() {
		return unixEpoch
	}
	return c.epoch
}

// now returns the clock's reading as an offset from the epoch. With the real
// clock, Since reads only the monotonic clock, so wall-clock steps cannot
// expire or prolong a record, as with upstream's time.Since.
func (c *ControllerExpectations) now() time.Duration {
	if c.clock == nil {
		return time.Since(c.base())
	}
	return c.clock.Since(c.base())
}

func (c *ControllerExpectations) timeout() time.Duration {
	if c.ttl <= 0 {
		return ExpectationsTimeout
	}
	return c.ttl
}

func (c *ControllerExpectations) shardFor(key string) *shard {
	return &c.shards[maphash.String(hashSeed, key)%numShards]
}

// lookup returns the current record for key without judging its age.
func (c *ControllerExpectations) lookup(key string) (*shard, *ControlleeExpectations) {
	s := c.shardFor(key)
	s.mu.RLock()
	rec := s.recs[key]
	s.mu.RUnlock()
	return s, rec
}

// live returns the record for key unless it is missing or expired; an
// expired record is evicted on the way, which is what makes reads part of
// the cleanup.
func (c *ControllerExpectations) live(key string) *ControlleeExpectations {
	s, rec := c.lookup(key)
	if rec == nil {
		return nil
	}
	if now := c.now(); rec.expired(now, c.timeout()) {
		c.evict(s, rec, now)
		return nil
	}
	return rec
}

// evict removes rec if it is still the current record. Only the caller that
// actually removes it logs, so an unfulfilled expiry is reported once.
func (c *ControllerExpectations) evict(s *shard, rec *ControlleeExpectations, now time.Duration) {
	s.mu.Lock()
	// Re-check expiry under the lock: a concurrent Set may have re-stamped
	// this very record in place since the caller looked.
	removed := s.recs[rec.key] == rec && rec.expired(now, c.timeout())
	if removed {
		s.remove(rec)
	}
	var gone expiredRecord
	logIt := removed && !rec.Fulfilled()
	if logIt {
		gone = snapshot(rec, now)
	}
	s.mu.Unlock()
	if logIt {
		c.logExpired(gone)
	}
}

// logExpired reports the event behind kubernetes#129795: the owner will be
// synced although its informer has not caught up, which can duplicate work.
// It is called with no lock held because the sink is user code.
func (c *ControllerExpectations) logExpired(e expiredRecord) {
	kv := []any{"key", e.key, "add", e.add, "del", e.del, "age", e.age, "ttl", c.timeout()}
	if len(e.names) > 0 {
		kv = append(kv, "pendingNames", e.names)
	}
	c.logger.Info("Expectations expired before they were fulfilled; syncing the owner anyway", kv...)
}

// GetExpectations returns the live record for key. An expired record is
// evicted and reported as absent, as upstream's TTL store does. The error is
// non-nil only for a nil receiver.
func (c *ControllerExpectations) GetExpectations(key string) (*ControlleeExpectations, bool, error) {
	if c == nil {
		return nil, false, ErrNilExpectations
	}
	rec := c.live(key)
	return rec, rec != nil, nil
}

// SatisfiedExpectations reports whether the owner behind key may be synced:
// true when no record exists, when the record is fulfilled, or when it has
// expired; false only for an unexpired record still waiting for
// observations.
func (c *ControllerExpectations) SatisfiedExpectations(key string) bool {
	if c == nil {
		return true
	}
	s, rec := c.lookup(key)
	if rec == nil || rec.Fulfilled() {
		return true
	}
	if now := c.now(); rec.expired(now, c.timeout()) {
		c.evict(s, rec, now)
		return true
	}
	return false
}

// DeleteExpectations forgets the record for key; unknown keys are ignored.
func (c *ControllerExpectations) DeleteExpectations(key string) {
	if c == nil {
		return
	}
	now := c.now()
	s := c.shardFor(key)
	s.mu.Lock()
	if rec := s.recs[key]; rec != nil {
		s.remove(rec)
	}
	expired := s.afterWrite(now, c.timeout())
	s.mu.Unlock()
	c.logAll(expired)
}

// SetExpectations replaces any record for key with one expecting add
// creations and del deletions, timestamped now. Counts may be negative, which
// makes the record fulfilled at once, as upstream allows.
func (c *ControllerExpectations) SetExpectations(key string, add, del int) error {
	if c == nil {
		return ErrNilExpectations
	}
	c.store(key, int64(add), int64(del), nil)
	return nil
}

// ExpectCreations is SetExpectations(key, adds, 0); it resets del to 0.
func (c *ControllerExpectations) ExpectCreations(key string, adds int) error {
	return c.SetExpectations(key, adds, 0)
}

// ExpectDeletions is SetExpectations(key, 0, dels); it resets add to 0.
func (c *ControllerExpectations) ExpectDeletions(key string, dels int) error {
	return c.SetExpectations(key, 0, dels)
}

// store sets the record for key. An existing record is reset in place, which
// keeps the steady state of a controller (the same owners re-Set over and
// over) free of allocations; a new key costs one allocation.
func (c *ControllerExpectations) store(key string, add, del int64, names map[string]struct{}) {
	now, ttl := c.now(), c.timeout()
	s := c.shardFor(key)
	s.mu.Lock()
	var replaced expiredRecord
	rec := s.recs[key]
	logReplaced := false
	if rec != nil {
		if rec.expired(now, ttl) && !rec.Fulfilled() {
			replaced, logReplaced = snapshot(rec, now), true
		}
	} else {
		rec = &ControlleeExpectations{key: key, epoch: c.base(), pos: len(s.order)}
		if s.recs == nil {
			s.recs = make(map[string]*ControlleeExpectations)
		}
		s.order = append(s.order, rec)
		s.recs[key] = rec
	}
	// Stamp first: a reader racing with the reset then sees either the old
	// counts with a fresh stamp (still waiting) or the new counts, never an
	// old expired stamp with new counts.
	rec.stamp.Store(int64(now))
	rec.add.Store(add)
	rec.del.Store(del)
	rec.names = names
	expired := s.afterWrite(now, ttl)
	s.mu.Unlock()

	if logReplaced {
		c.logExpired(replaced)
	}
	c.logAll(expired)
}

func (c *ControllerExpectations) logAll(expired []expiredRecord) {
	for _, e := range expired {
		c.logExpired(e)
	}
}

// LowerExpectations subtracts add and del from the record's counters. It does
// nothing when the key has no live record: an observation must never create
// expectations.
func (c *ControllerExpectations) LowerExpectations(key string, add, del int) {
	if c == nil {
		return
	}
	// No expiry check, so an observation costs no clock read: an expired
	// record stays expired whatever its counts, and every reader (Get,
	// Satisfied, Pending) already treats it as absent, so lowering it is
	// unobservable.
	if _, rec := c.lookup(key); rec != nil {
		rec.Add(-int64(add), -int64(del))
	}
}

// RaiseExpectations adds add and del to the record's counters; no-op for an
// unknown key. The TTL is not refreshed, as upstream.
func (c *ControllerExpectations) RaiseExpectations(key string, add, del int) {
	if c == nil {
		return
	}
	if _, rec := c.lookup(key); rec != nil { // no expiry check: see LowerExpectations
		rec.Add(int64(add), int64(del))
	}
}

// CreationObserved lowers the add count by one; no-op for an unknown key.
func (c *ControllerExpectations) CreationObserved(key string) {
	c.LowerExpectations(key, 1, 0)
}

// DeletionObserved lowers the del count by one; no-op for an unknown key.
func (c *ControllerExpectations) DeletionObserved(key string) {
	c.LowerExpectations(key, 0, 1)
}

// Len returns how many records the cache holds, including expired ones the
// lazy eviction has not reached yet. Call EvictExpired first for a count of
// live records only.
func (c *ControllerExpectations) Len() int {
	if c == nil {
		return 0
	}
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		n += len(s.recs)
		s.mu.RUnlock()
	}
	return n
}

// EvictExpired removes every expired record now, logging the unfulfilled
// ones, and returns how many it removed. Nothing needs to call it (eviction
// is otherwise lazy and amortised); it exists for callers that want memory
// trimmed at a moment of their choosing, such as a periodic resync.
func (c *ControllerExpectations) EvictExpired() int {
	if c == nil {
		return 0
	}
	now, ttl := c.now(), c.timeout()
	total := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		before := len(s.order)
		s.cursor = 0
		expired := s.sweep(now, ttl, before, nil)
		total += before - len(s.order)
		s.mu.Unlock()
		c.logAll(expired)
	}
	return total
}

// expiredRecord is what gets logged about a record that expired unfulfilled,
// copied under the shard lock so logging can happen after the unlock.
type expiredRecord struct {
	key      string
	add, del int64
	age      time.Duration
	names    []string
}

func snapshot(rec *ControlleeExpectations, now time.Duration) expiredRecord {
	add, del := rec.GetExpectations()
	return expiredRecord{key: rec.key, add: add, del: del, age: rec.age(now), names: sortedNames(rec.names)}
}

// afterWrite runs the amortised sweep; the caller holds s.mu for writing.
func (s *shard) afterWrite(now, ttl time.Duration) []expiredRecord {
	s.writes++
	if s.writes%sweepEvery != 0 {
		return nil
	}
	return s.sweep(now, ttl, sweepBatch, nil)
}

// sweep examines up to n records from the cursor, removing expired ones and
// collecting the unfulfilled among them for logging after the unlock.
func (s *shard) sweep(now, ttl time.Duration, n int, out []expiredRecord) []expiredRecord {
	for i := 0; i < n && len(s.order) > 0; i++ {
		if s.cursor >= len(s.order) {
			s.cursor = 0
		}
		rec := s.order[s.cursor]
		if !rec.expired(now, ttl) {
			s.cursor++
			continue
		}
		if !rec.Fulfilled() {
			out = append(out, snapshot(rec, now))
		}
		// remove moves the last record into the cursor slot, so the cursor
		// stays put and that record is examined next.
		s.remove(rec)
	}
	return out
}

// remove unlinks rec; the caller holds s.mu for writing and has checked that
// rec is the current record for its key.
func (s *shard) remove(rec *ControlleeExpectations) {
	last := len(s.order) - 1
	if rec.pos >= 0 && rec.pos <= last {
		moved := s.order[last]
		s.order[rec.pos] = moved
		moved.pos = rec.pos
		s.order[last] = nil
		s.order = s.order[:last]
	}
	delete(s.recs, rec.key)
	rec.pos = -1
	if c := cap(s.order); c >= shrinkMinCap && len(s.order) < c/4 {
		s.shrink()
	}
}

func (s *shard) shrink() {
	order := make([]*ControlleeExpectations, len(s.order), 2*len(s.order))
	copy(order, s.order)
	recs := make(map[string]*ControlleeExpectations, len(order))
	for _, r := range order {
		recs[r.key] = r
	}
	s.order, s.recs = order, recs
	if s.cursor > len(order) {
		s.cursor = 0
	}
}

func sortedNames(names map[string]struct{}) []string {
	if len(names) == 0 {
		return nil
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// String summarises the cache for debugging.
func (c *ControllerExpectations) String() string {
	if c == nil {
		return "ControllerExpectations(nil)"
	}
	return fmt.Sprintf("ControllerExpectations{records: %d, ttl: %s}", c.Len(), c.timeout())
}
