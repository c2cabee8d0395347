// Package ttlmap is the expiring table behind expectations and consistency:
// a map whose entries expire a TTL after their stamp, evicted when read and
// by a sweep that writes pay for, so memory follows the live entries with no
// goroutine and a constant cost per write.
//
// A Table is not safe for concurrent use: its owner holds its own lock
// around every call, since it also guards the values.
package ttlmap

import (
	"iter"
	"maps"
	"time"

	"k8s.io/utils/clock"
)

// Clock reads a clock as offsets from the moment it was made. With the real
// clock, Since is one monotonic reading, half the cost of Now, and monotonic
// readings make expiry immune to wall-clock steps.
type Clock struct {
	clock clock.PassiveClock
	// Epoch is the clock's reading when the Clock was made; a stamp s is
	// the instant Epoch.Add(s).
	Epoch time.Time
}

// NewClock starts a Clock on clk.
func NewClock(clk clock.PassiveClock) Clock {
	return Clock{clock: clk, Epoch: clk.Now()}
}

// Now is the current offset from the epoch.
func (c *Clock) Now() time.Duration { return c.clock.Since(c.Epoch) }

// minSweep is the fewest writes between two sweeps, so that a small table is
// not swept at every write.
const minSweep = 64

// Schedule says when a table cleaned by its writers is swept: after perEntry
// writes for every entry the last sweep kept, and never sooner than minSweep
// writes. A sweep costs one step per entry, so each write pays 1/perEntry of
// a step, and between sweeps the table grows to at most perEntry+1 times what
// it kept.
type Schedule struct {
	perEntry, left int
}

// NewSchedule returns a Schedule whose first sweep is due after minSweep
// writes.
func NewSchedule(perEntry int) Schedule {
	return Schedule{perEntry: perEntry, left: minSweep}
}

// Wrote counts one write and reports whether a sweep is due.
func (s *Schedule) Wrote() bool {
	s.left--
	return s.left <= 0
}

// Swept schedules the next sweep after one that kept n entries.
func (s *Schedule) Swept(n int) { s.left = max(s.perEntry*n, minSweep) }

// State is what Lookup found.
type State uint8

const (
	// Absent: the key has no entry.
	Absent State = iota
	// Live: the entry has not expired.
	Live
	// Expired: the entry had expired and Lookup removed it.
	Expired
)

// Table maps keys to values that expire ttl after their stamp: strictly
// older than the TTL is expired, the rule upstream's expectations use.
// The stamp lives in the value, where the owner needs it anyway, and is read
// through the function given to New.
type Table[K comparable, V any] struct {
	ttl      time.Duration
	stamp    func(V) time.Duration
	entries  map[K]V
	schedule Schedule
}

// New returns an empty table whose entries expire ttl after stamp(value),
// swept after writesPerEntry writes per kept entry (see Schedule).
func New[K comparable, V any](ttl time.Duration, writesPerEntry int, stamp func(V) time.Duration) Table[K, V] {
	return Table[K, V]{ttl: ttl, stamp: stamp, entries: make(map[K]V), schedule: NewSchedule(writesPerEntry)}
}

// TTL returns the table's TTL.
func (t *Table[K, V]) TTL() time.Duration { return t.ttl }

// Expired reports whether v has expired at now.
func (t *Table[K, V]) Expired(v V, now time.Duration) bool { return t.StampExpired(t.stamp(v), now) }

// StampExpired reports whether a value stamped at stamp has expired at now,
// for a caller that copied the stamp out under its lock.
func (t *Table[K, V]) StampExpired(stamp, now time.Duration) bool { return now-stamp > t.ttl }

// Get returns k's entry whether or not it has expired.
func (t *Table[K, V]) Get(k K) (V, bool) {
	v, ok := t.entries[k]
	return v, ok
}

// Lookup returns k's entry and Live when it has not expired at now. An
// expired entry is removed and returned with Expired, so the caller can
// report it; a missing one returns Absent.
func (t *Table[K, V]) Lookup(k K, now time.Duration) (V, State) {
	v, ok := t.entries[k]
	switch {
	case !ok:
		return v, Absent
	case t.Expired(v, now):
		delete(t.entries, k)
		return v, Expired
	default:
		return v, Live
	}
}

// Put stores v under k. It does not count as a write for the sweep
// schedule: call Wrote for that, once per write however many entries it
// touches.
func (t *Table[K, V]) Put(k K, v V) { t.entries[k] = v }

// Delete removes k's entry, if any.
func (t *Table[K, V]) Delete(k K) { delete(t.entries, k) }

// Len returns the number of entries, expired ones not yet evicted included.
func (t *Table[K, V]) Len() int { return len(t.entries) }

// All iterates over every entry, expired ones not yet evicted included.
func (t *Table[K, V]) All() iter.Seq2[K, V] { return maps.All(t.entries) }

// Wrote counts one write and reports whether the caller should Sweep now.
func (t *Table[K, V]) Wrote() bool { return t.schedule.Wrote() }

// Sweep removes every entry expired at now, passing each to evicted (which
// may be nil), and schedules the next sweep. It returns how many it removed.
func (t *Table[K, V]) Sweep(now time.Duration, evicted func(K, V)) int {
	removed := 0
	for k, v := range t.entries {
		if t.Expired(v, now) {
			delete(t.entries, k)
			removed++
			if evicted != nil {
				evicted(k, v)
			}
		}
	}
	t.schedule.Swept(len(t.entries))
	return removed
}
