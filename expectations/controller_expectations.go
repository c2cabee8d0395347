package expectations

import (
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/ctrlkit/ctrlkit/internal/ttlmap"
)

// writesPerRecord is how many writes pay for sweeping one record: a sweep
// comes after four writes per record it kept (see ttlmap.Schedule), so each
// write pays a quarter step. Sweeping after one write per record took a
// tenth of the time of Expect+Observe+Satisfied; a quarter step takes 3%.
// Between sweeps a table grows to at most five times what it kept.
const writesPerRecord = 4

// ControllerExpectations is a TTL cache of ControlleeExpectations, safe for
// concurrent use. Create it with NewControllerExpectations.
//
// Expired records are evicted when they are read, and by a sweep that runs
// once there have been four times as many writes as records since the last
// one, so memory follows live owners without a goroutine and at a constant
// cost per write.
type ControllerExpectations struct {
	logger logr.Logger
	// clock reads time as offsets from its epoch, the clock's reading at
	// construction; records keep their time as such an offset. (Reading
	// it is half the cost of Now, which is the largest single cost of a
	// Set, and monotonic readings make expiry immune to wall-clock steps,
	// as upstream's time.Since is.)
	clock ttlmap.Clock

	// mu guards the table, the counter below, and every write the cache
	// makes to a stored record. The record counters are also atomics, for
	// callers of GetExpectations, who read and add to them without it.
	// One lock is enough: with 8 workers, splitting the map into 16
	// shards gained less than the run-to-run noise of the benchmark.
	mu      sync.Mutex
	records ttlmap.Table[string, *ControlleeExpectations]
	// lifetimes numbers the lifetimes handed out (see
	// ControlleeExpectations.lifetime); 0 is never used.
	lifetimes uint64
}

var _ ControllerExpectationsInterface = (*ControllerExpectations)(nil)

// NewControllerExpectations returns an empty cache.
func NewControllerExpectations(opts ...Option) *ControllerExpectations {
	cfg := newConfig(opts)
	return &ControllerExpectations{
		clock:   ttlmap.NewClock(cfg.clock),
		logger:  cfg.logger,
		records: ttlmap.New[string](cfg.ttl, writesPerRecord, recordSetAt),
	}
}

func recordSetAt(rec *ControlleeExpectations) time.Duration { return rec.setAt }

// now is the clock's reading as an offset from the epoch.
func (c *ControllerExpectations) now() time.Duration { return c.clock.Now() }

// liveLocked returns key's record unless it is missing or expired at now;
// an expired record is evicted and, if unfulfilled, appended to gone. The
// caller holds mu.
func (c *ControllerExpectations) liveLocked(key string, now time.Duration, gone []expiredRecord) (*ControlleeExpectations, []expiredRecord) {
	rec, state := c.records.Lookup(key, now)
	if state == ttlmap.Expired {
		return nil, appendIfUnfulfilled(gone, rec, now)
	}
	return rec, gone
}

// GetExpectations returns the record for key and whether it exists. An
// expired record is evicted and reported as absent, as upstream's TTL store
// does. The error is always nil.
//
// The caller may keep the record: a later Set of key stores a new one, as
// upstream does, and leaves this one as it was.
func (c *ControllerExpectations) GetExpectations(key string) (*ControlleeExpectations, bool, error) {
	now := c.now()
	c.mu.Lock()
	rec, gone := c.liveLocked(key, now, nil)
	if rec != nil {
		rec.shared = true
	}
	c.mu.Unlock()
	c.logExpired(gone)
	return rec, rec != nil, nil
}

// SatisfiedExpectations reports whether the owner behind key may be synced:
// true when no record exists, when the record is fulfilled, or when it has
// expired; false only for an unexpired record still waiting for
// observations. The clock is read only in that last case.
func (c *ControllerExpectations) SatisfiedExpectations(key string) bool {
	c.mu.Lock()
	rec, _ := c.records.Get(key)
	if rec == nil || rec.Fulfilled() {
		c.mu.Unlock()
		return true
	}
	setAt := rec.setAt
	c.mu.Unlock()
	// Still waiting, so only expiry can satisfy it. The clock is read
	// outside the lock.
	now := c.now()
	if !c.records.StampExpired(setAt, now) {
		return false
	}
	// Expired when read; look again, since a Set or an observation may
	// have come in between.
	c.mu.Lock()
	rec, gone := c.liveLocked(key, now, nil)
	satisfied := rec == nil || rec.Fulfilled()
	c.mu.Unlock()
	c.logExpired(gone)
	return satisfied
}

// DeleteExpectations forgets the record for key; unknown keys are ignored.
func (c *ControllerExpectations) DeleteExpectations(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.records.Delete(key)
}

// SetExpectations replaces the record for key with one expecting add
// creations and del deletions, timestamped now. Counts may be negative,
// which makes the record fulfilled at once, as upstream allows. The error is
// always nil.
func (c *ControllerExpectations) SetExpectations(key string, add, del int) error {
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

// store sets key's record to (add, del, names), timestamped now. The clock
// and the logger are called without the lock held.
func (c *ControllerExpectations) store(key string, add, del int64, names map[string]struct{}) {
	now := c.now()
	var gone []expiredRecord
	c.mu.Lock()
	rec, _ := c.records.Get(key)
	lifetime := uint64(0)
	if rec != nil && !c.records.Expired(rec, now) {
		lifetime = rec.lifetime
	} else {
		if rec != nil {
			gone = appendIfUnfulfilled(gone, rec, now)
		}
		c.lifetimes++
		lifetime = c.lifetimes
	}
	if rec != nil && !rec.shared {
		// No caller holds rec and the cache touches it only under mu, so
		// it is reset in place: an owner set again and again allocates
		// once. Plain writes suffice under mu.
		rec.add, rec.del, rec.setAt, rec.names, rec.lifetime = add, del, now, names, lifetime
	} else {
		c.records.Put(key, &ControlleeExpectations{add: add, del: del, key: key, epoch: &c.clock.Epoch, setAt: now, names: names, lifetime: lifetime})
	}
	if c.records.Wrote() {
		gone = c.sweep(now, gone)
	}
	c.mu.Unlock()
	c.logExpired(gone)
}

// LowerExpectations subtracts add and del from the record's counters. It
// does nothing when the key has no record: an observation never creates
// expectations. An expired record is lowered like any other; every reader
// treats it as absent, so that is unobservable, and it spares the
// observation a clock read.
func (c *ControllerExpectations) LowerExpectations(key string, add, del int) {
	c.adjust(key, negate(int64(add)), negate(int64(del)))
}

// negate is -n, except that math.MinInt64, which has no opposite, gives
// math.MaxInt64: lowering by the most negative count raises as far as
// possible, never wraps around.
func negate(n int64) int64 {
	if n == math.MinInt64 {
		return math.MaxInt64
	}
	return -n
}

// RaiseExpectations adds add and del to the record's counters; no-op for an
// unknown key. The TTL is not refreshed, as upstream. Counters saturate at
// the int64 limits: a huge raise leaves the owner waiting, where upstream's
// counter wraps around and reports it satisfied.
func (c *ControllerExpectations) RaiseExpectations(key string, add, del int) {
	c.adjust(key, int64(add), int64(del))
}

// adjust adds the deltas to key's record, if any, under mu: store may reset
// the record in place.
func (c *ControllerExpectations) adjust(key string, add, del int64) {
	c.mu.Lock()
	if rec, _ := c.records.Get(key); rec != nil {
		rec.Add(add, del)
	}
	c.mu.Unlock()
}

// CreationObserved lowers the add count by one; no-op for an unknown key.
func (c *ControllerExpectations) CreationObserved(key string) {
	c.LowerExpectations(key, 1, 0)
}

// DeletionObserved lowers the del count by one; no-op for an unknown key.
func (c *ControllerExpectations) DeletionObserved(key string) {
	c.LowerExpectations(key, 0, 1)
}

// lifetime returns the lifetime of key's live record, and false when key
// has no record or only an expired one.
func (c *ControllerExpectations) lifetime(key string) (uint64, bool) {
	now := c.now()
	c.mu.Lock()
	rec, gone := c.liveLocked(key, now, nil)
	var lifetime uint64
	if rec != nil {
		lifetime = rec.lifetime
	}
	c.mu.Unlock()
	c.logExpired(gone)
	return lifetime, rec != nil
}

// Len returns how many records the cache holds, including expired ones not
// yet evicted. Call EvictExpired first for a count of live records only.
func (c *ControllerExpectations) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.records.Len()
}

// EvictExpired removes every expired record now, logging the unfulfilled
// ones, and returns how many it removed. Nothing needs to call it; it is for
// callers that want memory trimmed at a moment of their choosing.
func (c *ControllerExpectations) EvictExpired() int {
	now := c.now()
	c.mu.Lock()
	before := c.records.Len()
	gone := c.sweep(now, nil)
	removed := before - c.records.Len()
	c.mu.Unlock()
	c.logExpired(gone)
	return removed
}

// sweep removes every expired record, appending the unfulfilled ones to
// gone, and schedules the next sweep; the caller holds mu.
func (c *ControllerExpectations) sweep(now time.Duration, gone []expiredRecord) []expiredRecord {
	c.records.Sweep(now, func(_ string, rec *ControlleeExpectations) {
		gone = appendIfUnfulfilled(gone, rec, now)
	})
	return gone
}

// expiredRecord is what is logged about a record that expired unfulfilled,
// copied under the lock so logging can happen after the unlock.
type expiredRecord struct {
	key      string
	add, del int64
	age      time.Duration
	names    []string
}

// appendIfUnfulfilled records rec for logging if it still waits for
// something; the caller holds mu (which guards names).
func appendIfUnfulfilled(gone []expiredRecord, rec *ControlleeExpectations, now time.Duration) []expiredRecord {
	if rec.Fulfilled() {
		return gone
	}
	add, del := rec.GetExpectations()
	return append(gone, expiredRecord{key: rec.key, add: add, del: del, age: now - rec.setAt, names: sortedNames(rec.names)})
}

// logExpired reports the event behind kubernetes#129795: the owner will be
// synced although its informer has not caught up, which can duplicate work.
func (c *ControllerExpectations) logExpired(gone []expiredRecord) {
	for _, e := range gone {
		kv := []any{"key", e.key, "add", e.add, "del", e.del, "age", e.age, "ttl", c.records.TTL()}
		if len(e.names) > 0 {
			kv = append(kv, "pendingNames", e.names)
		}
		c.logger.Info("Expectations expired before they were fulfilled; syncing the owner anyway", kv...)
	}
}

func sortedNames(names map[string]struct{}) []string {
	if len(names) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(names))
}
