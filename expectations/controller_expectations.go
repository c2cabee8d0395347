package expectations

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
)

// minSweep is the fewest writes between two sweeps.
const minSweep = 64

// writesBeforeSweep schedules the next sweep of a table that holds n
// entries after it: four writes per entry. A sweep costs one step per entry,
// so each write pays a quarter step. Sweeping after one write per entry took
// a tenth of the time of Expect+Observe+Satisfied; a quarter step takes 3%.
// Between sweeps a table grows to at most five times what it kept.
func writesBeforeSweep(n int) int { return max(4*n, minSweep) }

// ControllerExpectations is a TTL cache of ControlleeExpectations, safe for
// concurrent use. Create it with NewControllerExpectations.
//
// Expired records are evicted when they are read, and by a sweep that runs
// once there have been four times as many writes as records since the last
// one, so memory follows live owners without a goroutine and at a constant
// cost per write.
type ControllerExpectations struct {
	ttl    time.Duration
	clock  clock.PassiveClock
	logger logr.Logger
	// epoch is the clock's reading at construction. Records keep their
	// time as an offset from it, read with clock.Since: with the real
	// clock that is one monotonic reading, half the cost of Now, which
	// is the largest single cost of a Set. (Monotonic readings also make
	// expiry immune to wall-clock steps, as upstream's time.Since is.)
	epoch time.Time

	// mu guards the map, the counters below, and every write the cache makes
	// to a stored record. The record counters are also atomics, for callers of
	// GetExpectations, who read and add to them without it.
	// One lock is enough: with 8 workers, splitting the map into 16
	// shards gained less than the run-to-run noise of the benchmark.
	mu      sync.Mutex
	records map[string]*ControlleeExpectations
	// writesToSweep counts down the writes until the next sweep.
	writesToSweep int
	// lifetimes numbers the lifetimes handed out (see
	// ControlleeExpectations.lifetime); 0 is never used.
	lifetimes uint64
}

var _ ControllerExpectationsInterface = (*ControllerExpectations)(nil)

// NewControllerExpectations returns an empty cache.
func NewControllerExpectations(opts ...Option) *ControllerExpectations {
	cfg := defaultConfig()
	for _, opt := range opts {
		opt(&cfg)
	}
	return &ControllerExpectations{
		ttl:           cfg.ttl,
		clock:         cfg.clock,
		epoch:         cfg.clock.Now(),
		logger:        cfg.logger,
		records:       make(map[string]*ControlleeExpectations),
		writesToSweep: minSweep,
	}
}

// now is the clock's reading as an offset from the epoch.
func (c *ControllerExpectations) now() time.Duration { return c.clock.Since(c.epoch) }

// expired applies upstream's rule: strictly older than the TTL.
func (c *ControllerExpectations) expired(setAt, now time.Duration) bool {
	return now-setAt > c.ttl
}

// liveLocked returns key's record unless it is missing or expired at now;
// an expired record is evicted and, if unfulfilled, appended to gone. The
// caller holds mu.
func (c *ControllerExpectations) liveLocked(key string, now time.Duration, gone []expiredRecord) (*ControlleeExpectations, []expiredRecord) {
	rec := c.records[key]
	if rec == nil || !c.expired(rec.setAt, now) {
		return rec, gone
	}
	delete(c.records, key)
	return nil, appendIfUnfulfilled(gone, rec, now)
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
	rec := c.records[key]
	if rec == nil || rec.Fulfilled() {
		c.mu.Unlock()
		return true
	}
	setAt := rec.setAt
	c.mu.Unlock()
	// Still waiting, so only expiry can satisfy it. The clock is read
	// outside the lock.
	now := c.now()
	if !c.expired(setAt, now) {
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
	delete(c.records, key)
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
	rec := c.records[key]
	lifetime := uint64(0)
	if rec != nil && !c.expired(rec.setAt, now) {
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
		c.records[key] = &ControlleeExpectations{add: add, del: del, key: key, epoch: &c.epoch, setAt: now, names: names, lifetime: lifetime}
	}
	if c.writesToSweep--; c.writesToSweep <= 0 {
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
	c.adjust(key, -int64(add), -int64(del))
}

// RaiseExpectations adds add and del to the record's counters; no-op for an
// unknown key. The TTL is not refreshed, as upstream.
func (c *ControllerExpectations) RaiseExpectations(key string, add, del int) {
	c.adjust(key, int64(add), int64(del))
}

// adjust adds the deltas to key's record, if any, under mu: store may reset
// the record in place.
func (c *ControllerExpectations) adjust(key string, add, del int64) {
	c.mu.Lock()
	if rec := c.records[key]; rec != nil {
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
	return len(c.records)
}

// EvictExpired removes every expired record now, logging the unfulfilled
// ones, and returns how many it removed. Nothing needs to call it; it is for
// callers that want memory trimmed at a moment of their choosing.
func (c *ControllerExpectations) EvictExpired() int {
	now := c.now()
	c.mu.Lock()
	before := len(c.records)
	gone := c.sweep(now, nil)
	removed := before - len(c.records)
	c.mu.Unlock()
	c.logExpired(gone)
	return removed
}

// sweep removes every expired record, appending the unfulfilled ones to
// gone, and schedules the next sweep; the caller holds mu.
func (c *ControllerExpectations) sweep(now time.Duration, gone []expiredRecord) []expiredRecord {
	for key, rec := range c.records {
		if c.expired(rec.setAt, now) {
			delete(c.records, key)
			gone = appendIfUnfulfilled(gone, rec, now)
		}
	}
	c.writesToSweep = writesBeforeSweep(len(c.records))
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
		kv := []any{"key", e.key, "add", e.add, "del", e.del, "age", e.age, "ttl", c.ttl}
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
