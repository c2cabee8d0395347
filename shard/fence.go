package shard

import (
	"context"
	"slices"
	"sync"
)

// Holds reports whether the member may work on the object with hash h now:
// h is in its active ranges and its own Lease is still trusted (renewed
// within the Lease duration minus the safety margin). Check it before each
// write batch, or better take a Guard. It reads the clock on every call, so
// a paused or partitioned member stops holding without any goroutine
// noticing.
func (m *Member) Holds(h uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.holdsLocked(h)
}

func (m *Member) holdsLocked(h uint64) bool {
	return m.cfg.clock.Now().Before(m.validUntil) && m.active.Contains(h)
}

// Held returns the ranges the member may work on now; empty when its Lease
// is no longer trusted. Informers list and watch with Held().Selector(key)
// and filter with Held().Contains.
func (m *Member) Held() Ranges {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.cfg.clock.Now().Before(m.validUntil) {
		return nil
	}
	return slices.Clone(m.active)
}

// Wants reports whether h is in the member's share of the ring as it last
// computed it: it holds h, or is taking h up (its claim awaits the next
// step), or held h until its Lease lapsed and takes it up again once
// renewed. Work on h that Guard turned away while Wants is true should be
// tried again shortly. When it is false, h is in another member's share,
// and that member does the work once it takes h up.
func (m *Member) Wants(h uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.active.Contains(h) || m.share.Contains(h)
}

// TakeUps counts the steps in which the member took ranges up. Between two
// equal shares, a different count means the ranges were given up and taken
// back, and another member may have worked on them meanwhile: a cache over
// the share must list it afresh before work resumes, as for any range
// gained. A subscriber that compares shares only would miss a loss and a
// return announced in quick succession.
func (m *Member) TakeUps() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.takeUps
}

// guard is one running piece of work over a hash.
type guard struct {
	hash   uint64
	cancel context.CancelFunc
}

// Guard fences one batch of work on the object with hash h. When the member
// holds h, it returns a context derived from ctx that is cancelled as soon
// as the member gives h up or its validity lapses, and ok is true; a renewal
// extends the validity, so a batch longer than one Lease duration runs on
// as long as the member keeps renewing. The member keeps claiming h until
// done is called, so no other member starts on h while the batch runs. Call
// done when the batch is over, always. When the member does not hold h, ok
// is false, the context is already cancelled and done does nothing: do not
// write.
func (m *Member) Guard(ctx context.Context, h uint64) (guarded context.Context, done context.CancelFunc, ok bool) {
	if ctx == nil {
		panic("shard: Member.Guard: nil context")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.holdsLocked(h) {
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		return cancelled, func() {}, false
	}
	guarded, cancel := context.WithCancel(ctx)
	id := m.nextGuard
	m.nextGuard++
	m.guards[id] = &guard{hash: h, cancel: cancel}
	go m.lapse(guarded, cancel)
	var once sync.Once
	done = func() {
		once.Do(func() {
			cancel()
			m.mu.Lock()
			defer m.mu.Unlock()
			delete(m.guards, id)
			m.guardEndedLocked(h, m.cfg.clock.Now())
			if len(m.guards) == 0 {
				close(m.guardsIdle)
				m.guardsIdle = make(chan struct{})
			}
		})
	}
	return guarded, done, true
}

// lapse cancels a guard once the member's validity has passed, on the
// member's clock, even if Run's goroutine is stuck in a Lease call and never
// gets to release the ranges; each time its timer fires it looks at the
// validity again, since renewals move it on. It returns when the guard ends.
func (m *Member) lapse(guarded context.Context, cancel context.CancelFunc) {
	for {
		m.mu.Lock()
		left := m.validUntil.Sub(m.cfg.clock.Now())
		m.mu.Unlock()
		if left <= 0 {
			cancel()
			return
		}
		t := m.cfg.clock.NewTimer(left)
		select {
		case <-guarded.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}
