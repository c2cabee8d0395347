package shard

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// A member judges whether another member's Lease has expired by its own
// clock only: a Lease is fresh until it has been seen unchanged for its
// duration, counted from when this member first saw its current version.
// The renewTime the other member wrote is read from a clock that may be off
// by any amount, so it serves only to estimate that offset (PeerClockSkew).

// leaseVersion is what tells two versions of a Lease apart: its identity
// in the API server and every field a member writes. The resourceVersion
// alone would do against a real API server; the rest keeps the comparison
// right where the store does not bump it.
type leaseVersion struct {
	uid, resourceVersion string
	holder, claims       string
	renewTime            int64 // Unix microseconds; 0 when unset
	durationSeconds      int32
}

func versionOf(l *coordinationv1.Lease) leaseVersion {
	v := leaseVersion{
		uid:             string(l.UID),
		resourceVersion: l.ResourceVersion,
		claims:          l.Annotations[ClaimsAnnotation],
	}
	if l.Spec.HolderIdentity != nil {
		v.holder = *l.Spec.HolderIdentity
	}
	if l.Spec.RenewTime != nil {
		v.renewTime = l.Spec.RenewTime.UnixMicro()
	}
	if l.Spec.LeaseDurationSeconds != nil {
		v.durationSeconds = *l.Spec.LeaseDurationSeconds
	}
	return v
}

// observation is one Lease as this member saw it, times on its own clock.
type observation struct {
	version leaseVersion
	// seen is when the list that first showed this version answered: the
	// write of the version happened before, so its writer's renewal began
	// before too.
	seen time.Time
	// listed is when the last list showing the Lease, in any version, was
	// sent: a later version was written after that.
	listed time.Time
	// skew is the least offset of the writer's clock from ours that its
	// renewTimes prove, positive when the writer runs ahead.
	skew   time.Duration
	warned bool
}

// fresh reports whether the Lease, with the given duration, was seen
// changing less than duration before the list sent at start. A Lease this
// member never saw before is fresh for a whole duration from now on,
// whatever its renewTime says: a restart never takes over early.
func (o *observation) fresh(start time.Time, duration time.Duration) bool {
	return start.Before(o.seen.Add(duration))
}

// observe records the Leases of a list sent at start and answered at end,
// both read from this member's clock, and returns the members whose Leases
// are fresh. Only the goroutine of Run calls it.
func (m *Member) observe(leases []coordinationv1.Lease, start, end time.Time) []peer {
	if m.observed == nil {
		m.observed = map[string]*observation{}
	}
	listed := make(map[string]bool, len(leases))
	var fresh []peer
	m.nextExpiry = time.Time{}
	for i := range leases {
		l := &leases[i]
		p, ok := m.readPeer(l)
		if !ok {
			continue
		}
		listed[l.Name] = true
		o := m.observed[l.Name]
		if v := versionOf(l); o == nil || o.version != v {
			next := &observation{version: v, seen: end}
			if o != nil {
				next.warned = o.warned
			}
			if l.Name != m.store.name {
				next.skew = m.skewOf(l, o, end)
			}
			o = next
			m.observed[l.Name] = o
			m.warnSkew(l.Name, p.identity, o)
		}
		o.listed = start
		if !o.fresh(start, p.duration) {
			continue
		}
		fresh = append(fresh, p)
		if expiry := o.seen.Add(p.duration); l.Name != m.store.name && (m.nextExpiry.IsZero() || expiry.Before(m.nextExpiry)) {
			m.nextExpiry = expiry
		}
	}
	worst := time.Duration(0)
	for name, o := range m.observed {
		if !listed[name] {
			delete(m.observed, name)
			continue
		}
		worst = max(worst, o.skew, -o.skew)
	}
	m.mu.Lock()
	m.peerSkew = worst
	m.mu.Unlock()
	return fresh
}

// skewOf bounds the offset of the clock that wrote l's renewTime. The
// renewal began before the list that showed it answered (end), and, when the
// previous version was in an earlier list, no sooner than a write timeout
// before that list was sent: the write was not in it and took at most that
// long. A renewTime outside that window proves an offset at least as large as
// the distance to it; inside, none is proven.
func (m *Member) skewOf(l *coordinationv1.Lease, previous *observation, end time.Time) time.Duration {
	if l.Spec.RenewTime == nil {
		return 0
	}
	stamp := l.Spec.RenewTime.Time
	if d := stamp.Sub(end); d > 0 {
		return d
	}
	if previous == nil {
		return 0 // an old Lease: when it was written is unknown
	}
	if d := stamp.Sub(previous.listed.Add(-m.cfg.writeTimeout)); d < 0 {
		return d
	}
	return 0
}

// warnSkew logs once when a peer's clock is proven off by more than the
// safety margin, and again once it came back and went off again. The hand-
// over does not depend on it; other code reading timestamps written by
// other replicas may.
func (m *Member) warnSkew(lease, identity string, o *observation) {
	off := max(o.skew, -o.skew) > m.cfg.safetyMargin
	if off && !o.warned {
		m.cfg.logger.Info("Warning: a ring member's clock is off from ours by more than the safety margin; Lease expiry is judged on our clock, but check the nodes' time sync",
			"identity", m.identity, "peer", identity, "lease", lease, "skew", o.skew, "safetyMargin", m.cfg.safetyMargin)
	}
	o.warned = off
}

// PeerClockSkew returns the largest clock offset from this member's clock
// that the renewals of the ring's current Leases prove, as of the last step:
// a lower bound of how far another member's clock (or a hand-edited
// renewTime) is off. Zero when nothing is proven. It is meant for a metric;
// the hand-over judges expiry on this member's clock and does not depend on
// it.
func (m *Member) PeerClockSkew() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peerSkew
}
