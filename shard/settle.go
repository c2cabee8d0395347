package shard

import (
	"sync"
	"time"
)

// settling is what an epoch leaves the next: the owners whose writes may
// still be landing when it stopped, and until when. A write cancelled when
// the epoch stopped, or abandoned at its deadline a moment before, may
// still be stored after the next epoch listed its children; a sync of that
// owner before the write shows in the watch would make the same children
// again.
type settling struct {
	owners map[string]bool
	until  time.Time
}

// holds reports whether a sync of the owner with key must wait, and how long.
func (s settling) holds(key string, now time.Time) (time.Duration, bool) {
	if !s.owners[key] || !now.Before(s.until) {
		return 0, false
	}
	return s.until.Sub(now), true
}

// syncLog records an epoch's fenced syncs per owner key: how many run now
// and when the last one ended.
type syncLog struct {
	mu      sync.Mutex
	running map[string]int
	ended   map[string]time.Time
}

func (l *syncLog) begin(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running == nil {
		l.running, l.ended = map[string]int{}, map[string]time.Time{}
	}
	l.running[key]++
}

func (l *syncLog) end(key string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running[key]--; l.running[key] <= 0 {
		delete(l.running, key)
	}
	l.ended[key] = at
}

// settling returns the owners whose writes may still land after stop: a
// sync still running, or one that ended less than margin before stop. They
// wait until margin after stop, the allowance the ring makes for any write
// already sent.
func (l *syncLog) settling(stop time.Time, margin time.Duration) settling {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := settling{owners: map[string]bool{}, until: stop.Add(margin)}
	for key := range l.running {
		s.owners[key] = true
	}
	for key, at := range l.ended {
		if stop.Sub(at) < margin {
			s.owners[key] = true
		}
	}
	return s
}
