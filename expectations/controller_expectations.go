package expectations

import (
	"errors"
	"fmt"
	"hash/maphash"
	"sort"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
)

// ErrNilExpectations is returned by the writing methods of a nil
// *ControllerExpectations or of an unconstructed
// UIDTrackingControllerExpectations. Reading methods behave as an empty
// cache, so a controller that forgot to construct one fails loudly on its
// first Expect call rather than panicking inside an informer handler.
var ErrNilExpectations = errors.New("expectations: method called on a nil expectations cache")

// Writers are spread over shards so that owners synced by different workers
// do not queue behind one lock; 64 is far more than the cores a controller
// manager gets.
const (
	shardBits = 6
	numShards = 1 << shardBits
)

// Every sweepEvery locked writes to a shard, and every sweepEvery lock-free
// re-Sets of one record, the writer examines up to sweepBatch records of the
// next shard in rotation for expiry. That is two records per write on
// average, so n expired records are gone after about n/2 further writes, and
// no single write pays for more than sweepBatch checks. The counters live in
// the shard and the record the writer already holds, so pacing adds no
// memory traffic between cores. A step skips, without locking it, a shard
// whose last full pass proved nothing in it can expire yet (sweepAfter), so
// a cache of live records is not re-read over and over.
const (
	sweepEvery = 16
	sweepBatch = 32
)

var hashSeed = maphash.MakeSeed()

// ControllerExpectations is a TTL cache of ControlleeExpectations. Construct
// it with NewControllerExpectations. The zero value is also usable: real
// clock, ExpectationsTimeout, and no logging.
//
// Reads (SatisfiedExpectations, the Observed calls, Raise and Lower) take no
// lock. Re-setting an existing count-only record (the steady state of Set
// and Expect) locks only that record; inserting, Delete and named records
// lock one of 64 shards. It runs no
// goroutine: expired records are evicted when they are touched and by a small
// sweep that rides on writes, so memory follows live owners.
type ControllerExpectations struct {
	ttl    time.Duration
	clock  clock.PassiveClock
	logger logr.Logger
	// epoch is the clock's reading at construction; record times are
	// offsets from it (see ControlleeExpectations.stamp).
	epoch time.Time

	// shards index the records (see table.go).
	shards    [numShards]shard
	sweepNext atomic.Uint32
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
	if _, isReal := c.clock.(clock.RealClock); isReal || c.clock == nil {
		// Calling time.Since directly skips the interface call on the
		// hottest path; RealClock.Since is exactly this.
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

// locate hashes key once: the top bits pick the shard, the low bits the
// table slot.
func (c *ControllerExpectations) locate(key string) (*shard, uint64) {
	h := maphash.String(hashSeed, key)
	return &c.shards[h>>(64-shardBits)], h
}

// lookup returns the current record for key without judging its age.
func (c *ControllerExpectations) lookup(key string) *ControlleeExpectations {
	s, h := c.locate(key)
	return s.get(key, h)
}

// live returns the record for key unless it is missing or expired; an
// expired record is evicted on the way, which makes reads part of the
// cleanup.
func (c *ControllerExpectations) live(key string) *ControlleeExpectations {
	rec := c.lookup(key)
	if rec == nil {
		return nil
	}
	if now := c.now(); rec.expired(now, c.timeout()) {
		c.evict(rec, now)
		return nil
	}
	return rec
}

// evict removes rec if it is still the current, expired record for its key.
// Only the caller that actually removes it logs, so an unfulfilled expiry is
// reported once.
func (c *ControllerExpectations) evict(rec *ControlleeExpectations, now time.Duration) {
	s := &c.shards[rec.hash>>(64-shardBits)]
	s.mu.Lock()
	// Re-check under the lock: a concurrent Set may have re-stamped this
	// very record in place since the caller looked.
	var gone expiredRecord
	logIt := false
	if s.get(rec.key, rec.hash) == rec {
		snap, unfulfilled := snapshot(rec, now), !rec.Fulfilled()
		if rec.claimExpired(now, c.timeout()) {
			gone, logIt = snap, unfulfilled
			c.remove(s, rec)
		}
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

func (c *ControllerExpectations) logAll(expired []expiredRecord) {
	for _, e := range expired {
		c.logExpired(e)
	}
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
// observations. The clock is read only in that last case.
func (c *ControllerExpectations) SatisfiedExpectations(key string) bool {
	if c == nil {
		return true
	}
	rec := c.lookup(key)
	if rec == nil || rec.Fulfilled() {
		return true
	}
	if now := c.now(); rec.expired(now, c.timeout()) {
		c.evict(rec, now)
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
	s, h := c.locate(key)
	s.mu.Lock()
	if rec := s.get(key, h); rec != nil {
		rec.kill()
		c.remove(s, rec)
	}
	sweep := c.afterWrite(s)
	s.mu.Unlock()
	if sweep {
		c.sweepStep(now)
	}
}

// SetExpectations sets the record for key to expect add creations and del
// deletions, timestamped now, forgetting whatever it expected before. Counts
// may be negative, which makes the record fulfilled at once, as upstream
// allows.
//
// Unlike upstream, an existing record is reset in place rather than
// replaced, so a pointer from GetExpectations follows its key across re-Sets
// (until the record is deleted or evicted). This keeps a controller's steady
// state, the same owners set over and over, free of allocations.
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

// store sets the record for key, resetting an existing record in place (no
// allocation) or inserting a new one (one allocation). The clock is read
// before any lock is taken because it is user code.
func (c *ControllerExpectations) store(key string, add, del int64, names map[string]struct{}) {
	now, ttl := c.now(), c.timeout()
	s, h := c.locate(key)
	if names == nil {
		if done, sweep := c.reset(s.get(key, h), now, ttl, add, del); done {
			if sweep {
				c.sweepStep(now)
			}
			return
		}
	}

	s.mu.Lock()
	var replaced expiredRecord
	logReplaced := false
	rec := s.get(key, h)
	isNew := rec == nil
	if !isNew {
		// Under the shard lock a record in the table is never dead, so
		// this only waits out a lock-free re-Set.
		old, _ := rec.acquire()
		if age := now - time.Duration(old); age > ttl && !rec.Fulfilled() {
			replaced, logReplaced = snapshotAt(rec, age), true
		}
	} else {
		rec = &ControlleeExpectations{key: key, hash: h, epoch: c.base()}
	}
	rec.add.Store(add)
	rec.del.Store(del)
	rec.names = names
	// Storing the stamp releases a re-Set (readers saw the record as live
	// meanwhile) and, for a new record, precedes its publication.
	rec.stamp.Store(int64(now))
	if isNew {
		// Publish only once the record is complete.
		s.insert(rec)
	}
	sweep := c.afterWrite(s)
	s.mu.Unlock()

	if logReplaced {
		c.logExpired(replaced)
	}
	if sweep {
		c.sweepStep(now)
	}
}

// reset is the hot path of store: it re-sets rec, the record found for the
// key without a lock, holding only the record's busy stamp. It declines (done
// is false, and the caller takes the shard lock) when there is no record,
// when the record tracks names (their map belongs to the shard lock), or
// when the record was removed in the meantime. sweep paces the eviction
// sweep by the record's own reset count, so no counter is shared between
// cores.
func (c *ControllerExpectations) reset(rec *ControlleeExpectations, now, ttl time.Duration, add, del int64) (done, sweep bool) {
	if rec == nil {
		return false, false
	}
	// Taking the busy stamp orders this re-Set against eviction and
	// deletion, which mark the record dead under the shard lock: if they
	// won, the record is no longer in the table and the caller inserts a
	// fresh one; if this won, an eviction's compare-and-swap fails and a
	// deletion waits for the release.
	old, ok := rec.acquire()
	if !ok {
		return false, false
	}
	if rec.names != nil {
		rec.stamp.Store(old)
		return false, false
	}
	var replaced expiredRecord
	age := now - time.Duration(old)
	logReplaced := age > ttl && !rec.Fulfilled()
	if logReplaced {
		replaced = snapshotAt(rec, age)
	}
	// A counter that already holds the value is left alone: an atomic
	// store is a locked instruction, and loading first is free. An Add
	// racing with the skipped store is then simply ordered after it.
	if rec.add.Load() != add {
		rec.add.Store(add)
	}
	if rec.del.Load() != del {
		rec.del.Store(del)
	}
	rec.resets++
	sweep = rec.resets%sweepEvery == 0
	rec.stamp.Store(int64(now)) // releases the record
	if logReplaced {
		c.logExpired(replaced)
	}
	return true, sweep
}

// LowerExpectations subtracts add and del from the record's counters. It does
// nothing when the key has no record: an observation must never create
// expectations.
func (c *ControllerExpectations) LowerExpectations(key string, add, del int) {
	if c == nil {
		return
	}
	// No expiry check, so an observation costs no clock read: an expired
	// record stays expired whatever its counts, and every reader (Get,
	// Satisfied, Pending) already treats it as absent, so lowering it is
	// unobservable.
	if rec := c.lookup(key); rec != nil {
		rec.Add(-int64(add), -int64(del))
	}
}

// RaiseExpectations adds add and del to the record's counters; no-op for an
// unknown key. The TTL is not refreshed, as upstream.
func (c *ControllerExpectations) RaiseExpectations(key string, add, del int) {
	if c == nil {
		return
	}
	if rec := c.lookup(key); rec != nil { // no expiry check: see LowerExpectations
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
		s.mu.Lock()
		n += s.live
		s.mu.Unlock()
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
	now := c.now()
	total := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		before := s.live
		s.cursor = 0
		var expired []expiredRecord
		if t := s.tab.Load(); t != nil {
			expired = c.sweep(s, now, len(t.slots))
		}
		total += before - s.live
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
	return snapshotAt(rec, rec.age(now))
}

// snapshotAt is snapshot for a caller that holds the record's busy stamp
// and so knows its age (rec.age would wait for the caller itself).
func snapshotAt(rec *ControlleeExpectations, age time.Duration) expiredRecord {
	add, del := rec.GetExpectations()
	return expiredRecord{key: rec.key, add: add, del: del, age: age, names: sortedNames(rec.names)}
}

// afterWrite counts a write to s (the caller holds s.mu) and reports whether
// this write should pay for a sweep step.
func (c *ControllerExpectations) afterWrite(s *shard) bool {
	s.writes++
	return s.writes%sweepEvery == 0
}

// sweepStep examines up to sweepBatch records of the next shard in a global
// rotation. Rotating, rather than sweeping the written shard, means writes
// to any owner clean every shard, however the keys hash. The caller holds no
// lock.
func (c *ControllerExpectations) sweepStep(now time.Duration) {
	s := &c.shards[c.sweepNext.Add(1)%numShards]
	if now <= time.Duration(s.sweepAfter.Load()) {
		return // nothing in this shard can have expired yet
	}
	s.mu.Lock()
	expired := c.sweep(s, now, sweepBatch)
	s.mu.Unlock()
	c.logAll(expired)
}

// sweep examines up to n table slots from the cursor, removing expired
// records and collecting the unfulfilled among them for logging after the
// unlock. Counting slots rather than records bounds the work. The caller
// holds s.mu.
func (c *ControllerExpectations) sweep(s *shard, now time.Duration, n int) []expiredRecord {
	ttl := c.timeout()
	t := s.tab.Load()
	if t == nil || s.live == 0 {
		// Whatever is inserted from now on is stamped now or later.
		s.sweepAfter.Store(int64(now + ttl))
		return nil
	}
	var out []expiredRecord
	for range n {
		if s.cursor >= len(t.slots) {
			s.cursor = 0
		}
		if s.cursor == 0 {
			s.passStart, s.passMin = now, now
		}
		rec := t.slots[s.cursor].Load()
		s.cursor++
		if s.cursor == len(t.slots) {
			// A full pass saw every record that predates it; anything
			// set since is stamped after passStart (passMin starts
			// there), so none expires before passMin + ttl.
			s.sweepAfter.Store(int64(s.passMin + ttl))
		}
		if rec == nil || rec == tombstone {
			continue
		}
		if !rec.expired(now, ttl) {
			// A busy stamp lies in the future and never lowers passMin.
			// A re-Set that read the clock just before this pass began
			// may stamp slightly before passStart; that record is then
			// swept at most one pass late, and reads still evict it.
			if st := time.Duration(rec.stamp.Load()); st < s.passMin {
				s.passMin = st
			}
			continue
		}
		snap, unfulfilled := snapshot(rec, now), !rec.Fulfilled()
		if !rec.claimExpired(now, ttl) {
			continue
		}
		if unfulfilled {
			out = append(out, snap)
		}
		s.delete(rec)
	}
	s.maybeShrink()
	return out
}

// remove unlinks rec, the current record of its key; the caller holds s.mu.
func (c *ControllerExpectations) remove(s *shard, rec *ControlleeExpectations) {
	s.delete(rec)
	s.maybeShrink()
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
