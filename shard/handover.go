package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// The hand-over protocol.
//
// Every member publishes in its Lease the ranges it claims: the ranges it
// works on (active), the ranges it wants and has not started (pending), and
// the ranges it gave up while work on them may still be running (draining).
// One step of a member, every renew interval:
//
//  1. Write its Lease: a fresh renewTime and claims = active ∪ pending ∪
//     draining. The write extends its validity to renewTime + duration −
//     safety margin.
//  2. List the ring's Leases (a quorum read, not a cache). The fresh ones
//     (renewTime + leaseDurationSeconds > now) are the members; every member
//     computes the same Assign over them; its own share is its target.
//  3. Take up pending hashes that are in the target and that no other fresh
//     Lease claims: they become active. Only hashes written as claims in
//     step 1 of this same step qualify.
//  4. Give up active hashes outside the target: they stop being active at
//     once (Holds turns false, Guard contexts are cancelled) and stay
//     claimed as draining until every Guard over them has returned, so the
//     next write still claims them while work may run. Pending becomes
//     target − active.
//
// Why no two members are ever active on one hash: say A and B both took up h.
// Each wrote its claim on h and then listed. Writes and quorum reads are
// linearizable, so whichever wrote second listed after the other's claim
// and saw it, unless the other had dropped h (it dropped h only after it
// stopped work on h) or its Lease looked expired. A Lease looks expired to
// others at renewTime + duration, while its own member stops trusting its
// ranges at renewTime + duration − margin, measured from the stamp it
// wrote (Holds reads the clock on every call, and Guard contexts end there
// too): with clock skew under the margin, the expired member has stopped.
// A member that finds its Lease changed or deleted by someone else drops
// everything and rejoins, and a member that joins over a fresh Lease of an
// earlier incarnation of itself keeps that incarnation's claims (foreign
// draining) until that Lease would have expired.
//
// Liveness: two members can block each other's pending claims only while
// their views of the membership differ; once the Leases stop changing they
// compute the same assignment and one of them drops the claim.

// Member is one replica's membership in a ring: its Lease, its share of the
// hash space, and the fence that says whether it may still work on a hash.
type Member struct {
	cfg      config
	identity string
	store    leaseStore
	running  atomic.Bool

	// Used by Run's goroutine only: the last assignment and its members.
	assignedFor []string
	target      Ranges

	mu         sync.Mutex
	joined     bool
	validUntil time.Time // own validity; Holds is false from here on
	active     Ranges
	pending    Ranges
	draining   []drain
	members    []string
	share      Ranges // the assignment's share for this member at the last step
	takeUps    uint64 // steps that added ranges to active
	guards     map[uint64]*guard
	nextGuard  uint64
	guardsIdle chan struct{} // closed and replaced when the last guard returns
}

// drain is a set of given-up ranges that stay claimed until until, or until
// no guard over them is left. A foreign drain holds the claims of an earlier
// incarnation of this member, which no guard of ours covers.
type drain struct {
	ranges  Ranges
	until   time.Time
	foreign bool
}

// NewMember returns the member identity of ring, with its Lease in
// namespace. Run starts it. identity must be unique in the ring (a pod name
// does); ring must be a label value, and ring-identity a Lease name. An
// option combination that could let a healthy member lapse between two
// renewals panics.
func NewMember(client coordinationv1client.LeasesGetter, namespace, ring, identity string, opts ...Option) (*Member, error) {
	if client == nil {
		panic("shard: NewMember: nil client")
	}
	if err := validateNames(ring, identity); err != nil {
		return nil, err
	}
	c := newConfig(opts)
	if c.renewInterval+c.writeTimeout >= c.leaseDuration-c.safetyMargin {
		panic(fmt.Sprintf("shard: NewMember: renew interval %v plus write timeout %v must be shorter than lease duration %v minus safety margin %v",
			c.renewInterval, c.writeTimeout, c.leaseDuration, c.safetyMargin))
	}
	return &Member{
		cfg:      c,
		identity: identity,
		store: leaseStore{
			leases:          client.Leases(namespace),
			ring:            ring,
			identity:        identity,
			name:            LeaseName(ring, identity),
			durationSeconds: int32(c.leaseDuration / time.Second),
			writeTimeout:    c.writeTimeout,
			selector:        ringSelector(ring),
		},
		guards:     map[uint64]*guard{},
		guardsIdle: make(chan struct{}),
	}, nil
}

// Identity is the member's identity in the ring.
func (m *Member) Identity() string { return m.identity }

// Members returns the identities of the fresh members at the last step, sorted.
func (m *Member) Members() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.members)
}

// Run joins the ring and keeps the member's Lease, claims and share up to
// date until ctx is done. Then it gives up every range, waits (up to the
// drain timeout) for Guards to return, and deletes its Lease so others take
// over at once; if work is still running it leaves the Lease to expire
// instead. It returns nil after a clean leave. Run is called once.
func (m *Member) Run(ctx context.Context) error {
	if ctx == nil {
		panic("shard: Member.Run: nil context")
	}
	if !m.running.CompareAndSwap(false, true) {
		panic("shard: Member.Run: called twice; a Member joins its ring once")
	}
	for {
		m.step(ctx)
		wait := m.cfg.renewInterval
		if m.handingOver() {
			wait = max(m.cfg.renewInterval/4, time.Millisecond)
		}
		timer := m.cfg.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return m.leave(ctx)
		case <-timer.C():
		}
	}
}

// handingOver reports whether a step soon would move ranges: something is
// pending or draining.
func (m *Member) handingOver() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.pending.Empty() || len(m.draining) > 0
}

// step is one round of the protocol described at the top of this file.
func (m *Member) step(ctx context.Context) {
	logger := m.cfg.logger
	if !m.joined {
		if err := m.join(ctx); err != nil {
			logger.Error(err, "Joining ring failed", "ring", m.store.ring, "identity", m.identity)
			return
		}
	}

	now := m.cfg.clock.Now()
	m.mu.Lock()
	before := m.active
	if !now.Before(m.validUntil) && !m.active.Empty() {
		logger.Info("Lease not renewed in time; stopping all ranges", "identity", m.identity)
		m.releaseLocked(m.active, now)
	}
	m.pruneDrainsLocked(now)
	written := m.pending
	claims := m.claimsLocked()
	m.mu.Unlock()
	// Every way out of the step announces a change of the held ranges, the
	// early ones included: a release announced late would let the ranges
	// reappear unchanged to a subscriber that never saw them go.
	defer m.notify(before)

	// Stamp at microsecond precision, as the API server stores it, so our
	// validity never outlives what others read.
	stamp := metav1.NewMicroTime(now.Truncate(time.Microsecond))
	renewErr := m.store.renew(ctx, claims, stamp)
	if renewErr != nil {
		logger.Error(renewErr, "Renewing Lease failed", "identity", m.identity)
		if errors.Is(renewErr, errLeaseLost) {
			m.mu.Lock()
			m.releaseLocked(m.active, now)
			m.pending = nil
			m.joined = false
			m.mu.Unlock()
			return
		}
	} else {
		m.mu.Lock()
		if returned := m.cfg.clock.Now(); !returned.Before(m.validUntil) {
			// The renewal came back after the validity it was to extend had
			// passed: for a while Holds was false, Guards were cancelled and
			// work was turned away, yet the held ranges would look unchanged
			// and nobody would be told. Treat it as the lapse it was: give
			// the ranges up and take them up again through the protocol, so
			// the change is announced both ways and the work turned away is
			// done by the next holder, this member or another. The drain
			// of what was given up starts now, not at the step's start.
			m.releaseLocked(m.active, returned)
		}
		if until := stamp.Add(m.cfg.leaseDuration - m.cfg.safetyMargin); until.After(m.validUntil) {
			m.validUntil = until
		}
		m.mu.Unlock()
	}

	leases, err := m.store.list(ctx)
	if err != nil {
		logger.Error(err, "Listing ring members failed", "ring", m.store.ring)
		return
	}
	now = m.cfg.clock.Now()
	var identities []string
	var othersClaim Ranges
	for i := range leases {
		p, ok := m.readPeer(&leases[i])
		if !ok || !now.Before(p.expiry) {
			continue
		}
		identities = append(identities, p.identity)
		if p.identity != m.identity {
			othersClaim = othersClaim.Union(p.claims)
		}
	}
	slices.Sort(identities)
	identities = slices.Compact(identities)
	if !slices.Equal(identities, m.assignedFor) || m.assignedFor == nil {
		// Assign sorts members × slots scores: worth skipping while the
		// ring is unchanged, which is nearly always.
		m.target = assign(identities, m.cfg.slots, m.cfg.loadPermille)[m.identity]
		m.assignedFor = identities
	}
	target := m.target

	m.mu.Lock()
	m.members = identities
	if renewErr == nil && now.Before(m.validUntil) {
		blocked := othersClaim
		for _, d := range m.draining {
			if d.foreign {
				blocked = blocked.Union(d.ranges)
			}
		}
		if taken := written.Intersect(target).Subtract(blocked).Subtract(m.active); !taken.Empty() {
			m.active = m.active.Union(taken)
			m.takeUps++
		}
	}
	m.releaseLocked(m.active.Subtract(target), now)
	m.pending = target.Subtract(m.active)
	m.share = target
	m.mu.Unlock()
}

// join reads the member's own Lease before the first write: if an earlier
// incarnation left it fresh with claims, those stay claimed until it would
// expire, since that incarnation may still be working.
func (m *Member) join(ctx context.Context) error {
	l, err := m.store.get(ctx)
	if err != nil {
		return err
	}
	m.joined = true
	if l == nil {
		return nil
	}
	inherited, ok := m.readPeer(l)
	if !ok || inherited.claims.Empty() || !m.cfg.clock.Now().Before(inherited.expiry) {
		return nil
	}
	m.mu.Lock()
	m.draining = append(m.draining, drain{ranges: inherited.claims, until: inherited.expiry, foreign: true})
	m.mu.Unlock()
	return nil
}

// releaseLocked stops work on rs at once and keeps it claimed while guards
// over it may still be running.
func (m *Member) releaseLocked(rs Ranges, now time.Time) {
	rs = rs.Intersect(m.active)
	if rs.Empty() {
		return
	}
	m.active = m.active.Subtract(rs)
	for _, g := range m.guards {
		if rs.Contains(g.hash) {
			g.cancel()
		}
	}
	m.draining = append(m.draining, drain{ranges: rs, until: now.Add(m.cfg.drainTimeout)})
	m.pruneDrainsLocked(now)
}

// pruneDrainsLocked forgets drains that timed out and, in our own, the
// ranges no guard covers any more.
func (m *Member) pruneDrainsLocked(now time.Time) {
	kept := m.draining[:0]
	for _, d := range m.draining {
		if !now.Before(d.until) {
			continue
		}
		if !d.foreign {
			d.ranges = slices.DeleteFunc(slices.Clone(d.ranges), func(r Range) bool {
				for _, g := range m.guards {
					if r.Contains(g.hash) {
						return false
					}
				}
				return true
			})
		}
		if !d.ranges.Empty() {
			kept = append(kept, d)
		}
	}
	clear(m.draining[len(kept):])
	m.draining = kept
}

func (m *Member) claimsLocked() Ranges {
	claims := m.active.Union(m.pending)
	for _, d := range m.draining {
		claims = claims.Union(d.ranges)
	}
	return claims
}

// notify calls the change callback when the held ranges differ from before.
func (m *Member) notify(before Ranges) {
	if m.cfg.onChange == nil {
		return
	}
	m.mu.Lock()
	after := slices.Clone(m.active)
	m.mu.Unlock()
	if !after.Equal(before) {
		m.cfg.onChange(after)
	}
}

// leave gives up every range, waits for guards, and deletes the Lease.
func (m *Member) leave(ctx context.Context) error {
	now := m.cfg.clock.Now()
	m.mu.Lock()
	before := m.active
	m.releaseLocked(m.active, now)
	m.pending = nil
	idle := m.guardsIdle
	busy := len(m.guards) > 0
	m.mu.Unlock()
	m.notify(before)

	if busy {
		timer := m.cfg.clock.NewTimer(m.cfg.drainTimeout)
		select {
		case <-idle:
			timer.Stop()
		case <-timer.C():
			m.cfg.logger.Info("Work still running after the drain timeout; leaving the Lease to expire", "identity", m.identity)
			return nil
		}
	}
	// ctx is done; the delete gets its own deadline from the store.
	if err := m.store.remove(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	return nil
}
