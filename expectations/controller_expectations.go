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

	// mu guards the map, the names of named records, and the counters
	// below. The record counters are atomics and are updated outside it.
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
func (c *ControllerExpectations) expired(rec *ControlleeExpectations, now time.Duration) bool {
	return now-rec.setAt > c.ttl
}

func (c *ControllerExpectations) lookup(key string) *ControlleeExpectations {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.records[key]
}

// live returns the record for key unless it is missing or expired; an
// expired record is evicted on the way.
func (c *ControllerExpectations) live(key string) *ControlleeExpectations {
	rec := c.lookup(key)
	if rec == nil {
		return nil
	}
	if now := c.now(); c.expired(rec, now) {
		c.evict(rec, now)
		return nil
	}
	return rec
}

// evict removes rec if it is still the record of its key, and logs it if it
// expired unfulfilled; only the caller that removes it logs.
func (c *ControllerExpectations) evict(rec *ControlleeExpectations, now time.Duration) {
	var gone []expiredRecord
	c.mu.Lock()
	if c.records[rec.key] == rec {
		delete(c.records, rec.key)
		gone = appendIfUnfulfilled(gone, rec, now)
	}
	c.mu.Unlock()
	c.logExpired(gone)
}

// GetExpectations returns the record for key and whether it exists. An
// expired record is evicted and reported as absent, as upstream's TTL store
// does. The error is always nil.
func (c *ControllerExpectations) GetExpectations(key string) (*ControlleeExpectations, bool, error) {
	rec := c.live(key)
	return rec, rec != nil, nil
}

// SatisfiedExpectations reports whether the owner behind key may be synced:
// true when no record exists, when the record is fulfilled, or when it has
// expired; false only for an unexpired record still waiting for
// observations. The clock is read only in that last case.
func (c *ControllerExpectations) SatisfiedExpectations(key string) bool {
	rec := c.lookup(key)
	if rec == nil || rec.Fulfilled() {
		return true
	}
	if now := c.now(); c.expired(rec, now) {
		c.evict(rec, now)
		return true
	}
	return false
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

// store installs a fresh record for key. The clock and the logger are
// called without the lock held.
func (c *ControllerExpectations) store(key string, add, del int64, names map[string]struct{}) {
	now := c.now()
	// The counters are set without atomics: the record is published
	// under mu, which orders these writes before any other access.
	rec := &ControlleeExpectations{add: add, del: del, key: key, epoch: &c.epoch, setAt: now, names: names}

	var gone []expiredRecord
	c.mu.Lock()
	old := c.records[key]
	if old != nil && !c.expired(old, now) {
		rec.lifetime = old.lifetime
	} else {
		if old != nil {
			gone = appendIfUnfulfilled(gone, old, now)
		}
		c.lifetimes++
		rec.lifetime = c.lifetimes
	}
	c.records[key] = rec
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
	if rec := c.lookup(key); rec != nil {
		rec.Add(-int64(add), -int64(del))
	}
}

// RaiseExpectations adds add and del to the record's counters; no-op for an
// unknown key. The TTL is not refreshed, as upstream.
func (c *ControllerExpectations) RaiseExpectations(key string, add, del int) {
	if rec := c.lookup(key); rec != nil {
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

// lifetime returns the lifetime of key's live record, and false when key
// has no record or only an expired one.
func (c *ControllerExpectations) lifetime(key string) (uint64, bool) {
	rec := c.live(key)
	if rec == nil {
		return 0, false
	}
	return rec.lifetime, true
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
		if c.expired(rec, now) {
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
