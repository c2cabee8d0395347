package shard

import (
	"sync"
	"time"
)

// syncLog records an epoch's fenced syncs: how many run now and when the
// last one ended. It tells the Runner when the epoch's writes have settled.
//
// Why it matters: stopping an epoch cancels its writes in flight, but
// cancelling a request stops the client waiting, not the API server storing
// it, and a write abandoned at its deadline is not even known to have
// arrived. A create stored after the next epoch listed its share is a child
// that epoch never counted, and it would make the same child again. So the
// next epoch lists only once the writes of the one before have settled: a
// safety margin after the stop, when a sync was running then or had ended
// within the margin before it. That is the allowance the ring makes for the
// writes of a member that gave a range up, so one rule covers a hand-over
// between members and one within a member.
type syncLog struct {
	mu      sync.Mutex
	running int
	lastEnd time.Time
}

func (l *syncLog) begin() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running++
}

func (l *syncLog) end(at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running--
	l.lastEnd = later(l.lastEnd, at)
}

// settledAt returns when the writes of an epoch stopped at stop have
// settled: margin after stop if a sync was still running, margin after the
// last sync ended otherwise (zero if none ran).
func (l *syncLog) settledAt(stop time.Time, margin time.Duration) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running > 0 {
		return stop.Add(margin)
	}
	if l.lastEnd.IsZero() {
		return time.Time{}
	}
	return l.lastEnd.Add(margin)
}
