package expectations

import (
	"sort"
	"time"
)

// PendingReport describes what one owner is still waiting for. It answers the
// question an operator asks when an owner stops making progress: which
// observations are missing, and for how long.
type PendingReport struct {
	// Key is the expectations key (see OwnerKey).
	Key string
	// Adds and Dels are the outstanding counts; zero or below means none.
	Adds, Dels int64
	// PendingNames lists, sorted, the expected creation names not yet
	// observed; nil unless the record was set by ExpectCreationsNamed.
	PendingNames []string
	// Since is when the record was set; Age is how long ago that was.
	Since time.Time
	Age   time.Duration
	// Fulfilled is true when nothing is outstanding.
	Fulfilled bool
}

func (c *ControllerExpectations) report(rec *ControlleeExpectations, now time.Duration) PendingReport {
	add, del := rec.GetExpectations()
	return PendingReport{
		Key:          rec.key,
		Adds:         add,
		Dels:         del,
		PendingNames: sortedNames(rec.names),
		Since:        rec.Timestamp(),
		Age:          rec.age(now),
		Fulfilled:    add <= 0 && del <= 0,
	}
}

// Pending returns the report for key and true when key has a live record,
// fulfilled or not. A missing or expired key returns false (and an expired
// record is evicted).
func (c *ControllerExpectations) Pending(key string) (PendingReport, bool) {
	if c == nil {
		return PendingReport{}, false
	}
	now := c.now()
	s, h := c.locate(key)
	s.mu.Lock()
	rec := s.get(key, h)
	if rec == nil {
		s.mu.Unlock()
		return PendingReport{}, false
	}
	if rec.expired(now, c.timeout()) {
		s.mu.Unlock()
		c.evict(rec, now)
		return PendingReport{}, false
	}
	// The names map is only stable under the shard lock.
	r := c.report(rec, now)
	s.mu.Unlock()
	return r, true
}

// PendingAll returns a report for every live record that is not fulfilled,
// sorted by key: the owners that SatisfiedExpectations currently holds back.
func (c *ControllerExpectations) PendingAll() []PendingReport {
	if c == nil {
		return nil
	}
	now, ttl := c.now(), c.timeout()
	var out []PendingReport
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		s.each(func(rec *ControlleeExpectations) {
			if !rec.Fulfilled() && !rec.expired(now, ttl) {
				out = append(out, c.report(rec, now))
			}
		})
		s.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
