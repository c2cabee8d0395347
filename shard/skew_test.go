package shard

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
)

// skewRing is a ring whose members each read their own fake clock, off from
// the harness's real time by a fixed skew, over one fake API server. Each
// member steps on its own schedule, as Run would (nextWait), and after every
// step the ring checks that no hash is held by two members, counting the
// members that died (stopped stepping) until their validity lapses.
type skewRing struct {
	t       *testing.T
	now     time.Time // real time
	client  *fake.Clientset
	members []*skewMember
	steps   int
}

type skewMember struct {
	label   string // unique per incarnation
	m       *Member
	clk     *clocktesting.FakeClock
	skew    time.Duration
	next    time.Time // real time of its next step
	renewed time.Time // real time its last step began
	dead    bool
}

func newSkewRing(t *testing.T) *skewRing {
	return &skewRing{
		t:      t,
		now:    time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC),
		client: fake.NewClientset(),
	}
}

// add starts a member (a new incarnation if label differs from an earlier
// one of identity) whose clock is off by skew.
func (r *skewRing) add(label, identity string, skew time.Duration, opts ...Option) *skewMember {
	r.t.Helper()
	clk := clocktesting.NewFakeClock(r.now.Add(skew))
	opts = append([]Option{WithClock(clk), WithLogger(logr.Discard())}, opts...)
	m, err := NewMember(r.client.CoordinationV1(), testNamespace, testRing, identity, opts...)
	if err != nil {
		r.t.Fatal(err)
	}
	sm := &skewMember{label: label, m: m, clk: clk, skew: skew, next: r.now}
	r.members = append(r.members, sm)
	return sm
}

func (r *skewRing) member(label string) *skewMember {
	for _, sm := range r.members {
		if sm.label == label {
			return sm
		}
	}
	r.t.Fatalf("no member %s", label)
	return nil
}

// run steps the live members until done reports true, and fails after
// limit of real time. It returns the real time done became true.
func (r *skewRing) run(limit time.Duration, what string, done func() bool) time.Time {
	r.t.Helper()
	deadline := r.now.Add(limit)
	for !done() {
		var sm *skewMember
		for _, c := range r.members {
			if !c.dead && (sm == nil || c.next.Before(sm.next)) {
				sm = c
			}
		}
		if sm == nil || sm.next.After(deadline) {
			r.t.Fatalf("%s: not within %v:%s", what, limit, r.describe())
		}
		r.setTime(sm.next)
		sm.renewed = r.now
		sm.m.step(context.Background())
		r.steps++
		r.checkDisjoint(sm.label)
		sm.next = r.now.Add(sm.m.nextWait(sm.clk.Now()))
	}
	return r.now
}

func (r *skewRing) setTime(t time.Time) {
	r.now = t
	for _, sm := range r.members {
		sm.clk.SetTime(t.Add(sm.skew))
	}
}

func (r *skewRing) checkDisjoint(stepped string) {
	r.t.Helper()
	held := make([]Ranges, len(r.members))
	for i, sm := range r.members {
		held[i] = sm.m.Held()
	}
	for i, a := range r.members {
		for j, b := range r.members[i+1:] {
			if both := held[i].Intersect(held[i+1+j]); !both.Empty() {
				r.t.Fatalf("after a step of %s, %s (skew %v) and %s (skew %v) both hold %.4f of the space:%s",
					stepped, a.label, a.skew, b.label, b.skew, both.Fraction(), r.describe())
			}
		}
	}
}

func (r *skewRing) describe() string {
	s := fmt.Sprintf(" at +%v", r.now.Sub(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)))
	for _, sm := range r.members {
		s += fmt.Sprintf("\n  %s (skew %v, dead %v): held %.3f members %v", sm.label, sm.skew, sm.dead, sm.m.Held().Fraction(), sm.m.Members())
	}
	return s
}

// converged reports whether the live members hold their assigned shares.
func (r *skewRing) converged() bool {
	var ids []string
	for _, sm := range r.members {
		if !sm.dead {
			ids = append(ids, sm.m.Identity())
		}
	}
	want := Assign(ids)
	for _, sm := range r.members {
		if !sm.dead && !sm.m.Held().Equal(want[sm.m.Identity()]) {
			return false
		}
	}
	return true
}

// covered reports whether the live members together hold the whole space.
func (r *skewRing) covered() bool {
	var all Ranges
	for _, sm := range r.members {
		if !sm.dead {
			all = all.Union(sm.m.Held())
		}
	}
	return all.Equal(FullRanges())
}

// takeOverBound is how long after a dead member's last renewal its share
// must be held again: its Lease duration, a step to claim it, and slack.
const takeOverBound = DefaultLeaseDuration + 5*time.Second

// Members whose clocks are off by far more than the safety margin: nobody
// holds a hash twice, a dead member's share moves on within its Lease
// duration and 5s whichever clock was off, and a new incarnation rejoins
// next to the skewed member.
func TestSkewedClocks(t *testing.T) {
	for _, skew := range []time.Duration{10 * time.Second, time.Minute, time.Hour, -time.Minute} {
		for _, victim := range []string{"s", "a"} {
			t.Run(fmt.Sprintf("skew %v, %s dies", skew, victim), func(t *testing.T) {
				r := newSkewRing(t)
				r.add("a", "a", 0)
				r.add("b", "b", 0)
				r.add("s", "s", skew)
				r.run(2*time.Minute, "converge", r.converged)
				steady := r.now.Add(30 * time.Second)
				r.run(time.Minute, "steady", func() bool { return !r.now.Before(steady) })
				if !r.converged() {
					t.Fatalf("left its shares while steady:%s", r.describe())
				}

				dead := r.member(victim)
				dead.dead = true
				at := r.run(2*time.Minute, "take over", r.covered)
				took := at.Sub(dead.renewed)
				if took > takeOverBound {
					t.Fatalf("share of %s held again %v after its last renewal, want at most %v", victim, took, takeOverBound)
				}

				r.add(victim+"'", victim, dead.skew)
				r.run(2*time.Minute, "rejoin", r.converged)
				steady = r.now.Add(30 * time.Second)
				r.run(time.Minute, "steady after rejoining", func() bool { return !r.now.Before(steady) })
				t.Logf("share of %s held again after %v; %d steps checked", victim, took, r.steps)
			})
		}
	}
}

// A hand-edited Lease of a dead member, with a renewTime a year ahead or a
// leaseDurationSeconds of 68 years, blocks its claims for one (capped)
// duration from the edit, not until its bogus expiry.
func TestBogusLeaseBlocksForCappedDuration(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*coordinationv1.Lease)
		bound time.Duration
	}{
		{"renewTime a year ahead", func(l *coordinationv1.Lease) {
			l.Spec.RenewTime = &metav1.MicroTime{Time: l.Spec.RenewTime.AddDate(1, 0, 0)}
		}, takeOverBound},
		{"huge leaseDurationSeconds", func(l *coordinationv1.Lease) {
			l.Spec.LeaseDurationSeconds = ptr(int32(math.MaxInt32))
		}, maxPeerDuration(DefaultLeaseDuration) + 5*time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newSkewRing(t)
			for _, id := range []string{"a", "b", "c"} {
				r.add(id, id, 0)
			}
			r.run(2*time.Minute, "converge", r.converged)
			r.member("c").dead = true
			leases := r.client.CoordinationV1().Leases(testNamespace)
			l, err := leases.Get(context.Background(), LeaseName(testRing, "c"), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tc.edit(l)
			if _, err := leases.Update(context.Background(), l, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			edited := r.now
			at := r.run(tc.bound+time.Minute, "take over", r.covered)
			took := at.Sub(edited)
			if took > tc.bound {
				t.Fatalf("share of the edited Lease held again %v after the edit, want at most %v", took, tc.bound)
			}
			t.Logf("share of the edited Lease held again after %v; %d steps checked", took, r.steps)
		})
	}
}

// logLines collects the messages a member logs.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, args)
	}, funcr.Options{})
}

func (l *logLines) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.lines {
		if strings.Contains(s, substr) {
			n++
		}
	}
	return n
}

// PeerClockSkew proves a lower bound of a peer's clock offset in either
// direction, zero among synchronized clocks, and a skew past the safety
// margin is logged once per peer, not at every step.
func TestPeerClockSkew(t *testing.T) {
	r := newSkewRing(t)
	var aLog, sLog logLines
	a := r.add("a", "a", 0, WithLogger(aLog.logger()))
	b := r.add("b", "b", 0)
	r.run(2*time.Minute, "converge", r.converged)
	if got := a.m.PeerClockSkew(); got != 0 {
		t.Fatalf("skew %v among synchronized clocks", got)
	}

	s := r.add("s", "s", time.Minute, WithLogger(sLog.logger()))
	r.run(2*time.Minute, "converge with s", r.converged)
	steady := r.now.Add(time.Minute)
	r.run(2*time.Minute, "steady minute", func() bool { return !r.now.Before(steady) })
	if got := a.m.PeerClockSkew(); got < time.Minute-DefaultRenewInterval-time.Second || got > time.Minute {
		t.Errorf("a sees skew %v from s a minute ahead", got)
	}
	if got := s.m.PeerClockSkew(); got < time.Minute-2*DefaultRenewInterval-DefaultWriteTimeout || got > time.Minute {
		t.Errorf("s, a minute ahead, sees skew %v", got)
	}
	if got := b.m.PeerClockSkew(); got == 0 {
		t.Error("b proves no skew of s")
	}
	const warning = "clock is off"
	if n := aLog.count(warning); n != 1 {
		t.Errorf("a logged %d skew warnings about s, want 1: %q", n, aLog.lines)
	}
	if n := sLog.count(warning); n != 2 {
		t.Errorf("s logged %d skew warnings about a and b, want 2: %q", n, sLog.lines)
	}

	// s leaves; its Lease is gone, and so is the skew.
	leaveOn(t, s.m, s.clk)
	s.dead = true
	r.run(time.Minute, "converge without s", r.converged)
	if got := a.m.PeerClockSkew(); got != 0 {
		t.Errorf("skew %v after the skewed member left", got)
	}
	if !slices.Equal(a.m.Members(), []string{"a", "b"}) {
		t.Errorf("members %v", a.m.Members())
	}
}

// Random crashes and restarts of members on clocks off by up to an hour
// either way; a restarted incarnation may land on a node with another
// clock. No hash is ever held twice, and the ring converges at the end.
func TestSkewedClocksRandomRestarts(t *testing.T) {
	skews := []time.Duration{-time.Hour, -time.Minute, -10 * time.Second, 0, 10 * time.Second, time.Minute, time.Hour}
	for seed := range uint64(2) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 7))
			r := newSkewRing(t)
			ids := []string{"a", "b", "c", "d", "e"}
			incarnation := map[string]*skewMember{}
			start := func(id string) {
				n := 0
				for _, sm := range r.members {
					if sm.m.Identity() == id {
						n++
					}
				}
				incarnation[id] = r.add(fmt.Sprintf("%s%d", id, n), id, skews[rnd.IntN(len(skews))])
			}
			for _, id := range ids {
				start(id)
			}
			for range 30 {
				until := r.now.Add(time.Duration(1+rnd.IntN(20)) * time.Second)
				r.run(time.Minute, "run", func() bool { return !r.now.Before(until) })
				id := ids[rnd.IntN(len(ids))]
				if sm := incarnation[id]; !sm.dead {
					live := 0
					for _, other := range incarnation {
						if !other.dead {
							live++
						}
					}
					if live > 1 {
						sm.dead = true
					}
				} else {
					start(id)
				}
			}
			for _, id := range ids {
				if incarnation[id].dead {
					start(id)
				}
			}
			r.run(3*time.Minute, "converge", r.converged)
			t.Logf("%d steps checked", r.steps)
		})
	}
}
