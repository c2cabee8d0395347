package expectations

import (
	"slices"
	"strings"
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

// report describes rec; the caller holds mu, which guards the names.
func report(rec *ControlleeExpectations, now time.Duration) PendingReport {
	add, del := rec.GetExpectations()
	return PendingReport{
		Key:          rec.key,
		Adds:         add,
		Dels:         del,
		PendingNames: sortedNames(rec.names),
		Since:        rec.Timestamp(),
		Age:          now - rec.setAt,
		Fulfilled:    add <= 0 && del <= 0,
	}
}

// Pending returns the report for key and true when key has a live record,
// fulfilled or not. A missing or expired key returns false (and an expired
// record is evicted).
func (c *ControllerExpectations) Pending(key string) (PendingReport, bool) {
	now := c.now()
	c.mu.Lock()
	rec, gone := c.liveLocked(key, now, nil)
	var r PendingReport
	if rec != nil {
		r = report(rec, now)
	}
	c.mu.Unlock()
	c.logExpired(gone)
	return r, rec != nil
}

// PendingAll returns a report for every live record that is not fulfilled,
// sorted by key: the owners that SatisfiedExpectations currently holds back.
func (c *ControllerExpectations) PendingAll() []PendingReport {
	now := c.now()
	var out []PendingReport
	c.mu.Lock()
	for _, rec := range c.records.All() {
		if !rec.Fulfilled() && !c.records.Expired(rec, now) {
			out = append(out, report(rec, now))
		}
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b PendingReport) int { return strings.Compare(a.Key, b.Key) })
	return out
}
