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
//  1. Write its Lease: claims = active ∪ pending ∪ draining and a fresh
//     renewTime. If the write succeeds, it extends the member's validity to
//     t + duration − safety margin, t being its own clock's reading just
//     before the write; if the write returned only after the previous
//     validity had passed, the member first stops all active ranges.
//  2. List the ring's Leases (a quorum read, not a cache), reading its clock
//     just before (start) and just after (end). A Lease is fresh while this
//     member has seen it unchanged (resourceVersion, renewTime, holder,
//     claims) for less than its leaseDurationSeconds, capped: a version it
//     sees for the first time counts as seen at end, and it stops being
//     fresh once start reaches that plus the duration. The fresh Leases are
//     the members; every member computes the same Assign over them; its own
//     share is its target.
//  3. Take up pending hashes that are in the target and that no other fresh
//     Lease claims: they become active. Only hashes written as claims in
//     step 1 of this same step qualify.
//  4. Give up active hashes outside the target: they stop being active at
//     once (Holds turns false, Guard contexts are cancelled) and stay
//     claimed as draining until every Guard over them has returned, so the
//     next write still claims them while work may run. Pending becomes
//     target − active.
//
// No member reads another's renewTime as a time: it comes from another
// clock, which may be off by any amount (or be hand-edited). Expiry is
// judged only by differences between two readings of one clock, so clock
// offsets between members don't matter; clock rates have to agree, which
// they do to a few parts per million.
//
// Why no two members are ever active on one hash: say A and B both took up
// h. Each wrote its claim on h and then listed. Writes and quorum reads are
// linearizable, so whichever wrote second, say B, listed after A's claim and
// saw it, unless A had dropped h (it drops h only after it stopped work on
// h) or A's Lease looked expired to B. Then B's list began at least a
// duration after B first saw the version of A's Lease that it showed. That
// version was written after A read its clock for it, so, in real time, A's
// validity from that write had ended (duration − margin after that reading)
// a margin before B's list began. A renewal of A that returned while A was
// still valid had landed before B's list began and would have shown in it,
// as a change; one that returned later found A's validity lapsed, so A
// stopped all ranges (step 1) instead of carrying them on. Either way A had
// stopped before B took h up, with the margin to spare for A's writes
// already sent and for clock rates drifting apart. A member that
// starts has seen nothing change yet, so it waits a whole duration before it
// takes over from any Lease, however old its renewTime looks. A member that
// finds its Lease changed or deleted by someone else drops everything and
// rejoins, and a member that joins over its own Lease left with claims by an
// earlier incarnation keeps those claims (foreign draining) for the Lease's
// duration from when it read it, as if it had seen it renewed then.
//
// Liveness: two members can block each other's pending claims only while
// their views of the membership differ; once the Leases stop changing they
// compute the same assignment and one of them drops the claim. A member
// that stopped renewing is out of everyone's view at most a duration plus a
// renew interval after its last renewal.

// Member is one replica's membership in a ring: its Lease, its share of the
// hash space, and the fence that says whether it may still work on a hash.
type Member struct {
	cfg      config
	identity string
	store    leaseStore
	running  atomic.Bool

	// Used by Run's goroutine only: the last assignment and its members,
	// and the ring's Leases as this member saw them change.
	assignedFor []string
	target      Ranges
	observed    map[string]*observation
	nextExpiry  time.Time // when the first fresh Lease of another member expires

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
	peerSkew   time.Duration // largest proven peer clock offset, for PeerClockSkew
	wake       []*func()     // Runners told of every change of active
}

// drain is a set of given-up ranges that stay claimed until until, or until
// no guard over them is left and settled has passed. A foreign drain holds
// the claims of an earlier incarnation of this member, which no guard of
// ours covers.
//
// Why settled: a guard ends when its work returns, but a write that work
// sent may still be applied after that. Cancelling a request stops the
// client waiting, not the API server storing it, and a write abandoned at
// its deadline is not even known to have arrived. A create that lands after
// the next holder listed the range is a child that holder never counted. So
// a range stays claimed for the safety margin after it was given up and
// after the last guard over it ended, the same allowance the protocol makes
// for the writes of a member whose Lease lapsed.
type drain struct {
	ranges  Ranges
	until   time.Time
	settled time.Time
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
		wait := m.nextWait(m.cfg.clock.Now())
		timer := m.cfg.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return m.leave(ctx)
		case <-timer.C():
		}
	}
}

// nextWait returns how long Run waits before the next step: a renew
// interval, a quarter of it while ranges are moving, and no longer than
// until another member's Lease expires, so its ranges move on as soon as
// they may rather than up to a renew interval later.
func (m *Member) nextWait(now time.Time) time.Duration {
	wait := m.cfg.renewInterval
	if m.handingOver() {
		wait = max(m.cfg.renewInterval/4, time.Millisecond)
	}
	if m.nextExpiry.After(now) {
		wait = min(wait, m.nextExpiry.Sub(now))
	}
	return wait
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

	// renewTime is informational (others judge expiry on their own clocks);
	// microsecond precision is what the API server stores.
	stamp := metav1.NewMicroTime(now.Truncate(time.Microsecond))
	renewErr := m.store.renew(ctx, claims, stamp)
	renewed := m.cfg.clock.Now()
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
		if !renewed.Before(m.validUntil) && !m.active.Empty() {
			// The renewal came back after the validity it was to extend had
			// passed: others may have found the Lease expired before it
			// landed, and for a while Holds was false, Guards were
			// cancelled and work was turned away, yet the held ranges
			// would look unchanged and nobody would be told. Treat it as
			// the lapse it was: give the ranges up and take them up again
			// through the protocol, so the change is announced both ways
			// and the work turned away is done by the next holder, this
			// member or another. The drain starts now, not at the step's
			// start.
			logger.Info("Lease renewed after it lapsed; stopping all ranges", "identity", m.identity)
			m.releaseLocked(m.active, renewed)
		}
		// From the clock reading taken before the write, not from the
		// stamp: others count from when they saw the write, which is later.
		if until := now.Add(m.cfg.leaseDuration - m.cfg.safetyMargin); until.After(m.validUntil) {
			m.validUntil = until
		}
		m.mu.Unlock()
	}

	listed := m.cfg.clock.Now()
	leases, err := m.store.list(ctx)
	if err != nil {
		logger.Error(err, "Listing ring members failed", "ring", m.store.ring)
		m.nextExpiry = time.Time{}
		return
	}
	now = m.cfg.clock.Now()
	var identities []string
	var othersClaim Ranges
	for _, p := range m.observe(leases, listed, now) {
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
// incarnation left claims in it, those stay claimed for the Lease's duration
// from now, since that incarnation may still be working. Its renewTime can't
// tell: it comes from the earlier incarnation's clock, maybe another node's,
// so the Lease counts as just renewed, as any Lease seen for the first time.
func (m *Member) join(ctx context.Context) error {
	l, err := m.store.get(ctx)
	if err != nil {
		return err
	}
	read := m.cfg.clock.Now()
	m.joined = true
	if l == nil {
		return nil
	}
	inherited, ok := m.readPeer(l)
	if !ok || inherited.claims.Empty() {
		return nil
	}
	m.mu.Lock()
	m.draining = append(m.draining, drain{ranges: inherited.claims, until: read.Add(inherited.duration), foreign: true})
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
	m.draining = append(m.draining, drain{ranges: rs, until: now.Add(m.cfg.drainTimeout), settled: now.Add(m.cfg.safetyMargin)})
	m.pruneDrainsLocked(now)
}

// guardEndedLocked keeps the drains over h claimed for the safety margin
// from now, when the guard over h that just ended may have left a write in
// flight.
func (m *Member) guardEndedLocked(h uint64, now time.Time) {
	for i := range m.draining {
		d := &m.draining[i]
		if !d.foreign && d.ranges.Contains(h) {
			d.settled = later(d.settled, now.Add(m.cfg.safetyMargin))
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// pruneDrainsLocked forgets drains that timed out and, in our own, the
// ranges no guard covers any more.
func (m *Member) pruneDrainsLocked(now time.Time) {
	kept := m.draining[:0]
	for _, d := range m.draining {
		if !now.Before(d.until) {
			continue
		}
		if !d.foreign && !now.Before(d.settled) {
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

// unsettled returns how long from now the last of the member's own drains
// settles.
func (m *Member) unsettled(now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	var wait time.Duration
	for _, d := range m.draining {
		if !d.foreign {
			wait = max(wait, d.settled.Sub(now))
		}
	}
	return wait
}

func (m *Member) claimsLocked() Ranges {
	claims := m.active.Union(m.pending)
	for _, d := range m.draining {
		claims = claims.Union(d.ranges)
	}
	return claims
}

// notify calls the change callback, and wakes every Runner over the
// member, when the held ranges differ from before.
func (m *Member) notify(before Ranges) {
	m.mu.Lock()
	after := slices.Clone(m.active)
	wake := slices.Clone(m.wake)
	m.mu.Unlock()
	if after.Equal(before) {
		return
	}
	if m.cfg.onChange != nil {
		m.cfg.onChange(after)
	}
	for _, w := range wake {
		(*w)()
	}
}

// subscribe calls fn, from Run's goroutine, after each change of the held
// ranges, until the returned function ends the subscription. fn must not
// block.
func (m *Member) subscribe(fn func()) (unsubscribe func()) {
	w := &fn
	m.mu.Lock()
	m.wake = append(m.wake, w)
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.wake = slices.DeleteFunc(m.wake, func(c *func()) bool { return c == w })
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
	// The last writes may still be landing: the Lease, and with it the
	// claims, stays until they have settled.
	if wait := m.unsettled(m.cfg.clock.Now()); wait > 0 {
		timer := m.cfg.clock.NewTimer(wait)
		<-timer.C()
	}
	// ctx is done; the delete gets its own deadline from the store.
	if err := m.store.remove(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	return nil
}
