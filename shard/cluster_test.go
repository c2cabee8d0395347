package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

const (
	testNamespace = "ns"
	testRing      = "ring"
)

var errPartitioned = errors.New("partitioned")

// flakyLeases is one member's line to the API server; cutting it fails every
// call, as a network partition would, and cutting writes fails only writes
// (an admission webhook down, a quota, a flaky load balancer).
type flakyLeases struct {
	coordinationv1client.LeasesGetter
	down, writesDown *atomic.Bool
}

func (f flakyLeases) Leases(namespace string) coordinationv1client.LeaseInterface {
	return flakyLeaseInterface{LeaseInterface: f.LeasesGetter.Leases(namespace), down: f.down, writesDown: f.writesDown}
}

type flakyLeaseInterface struct {
	coordinationv1client.LeaseInterface
	down, writesDown *atomic.Bool
}

func (f flakyLeaseInterface) Create(ctx context.Context, l *coordinationv1.Lease, o metav1.CreateOptions) (*coordinationv1.Lease, error) {
	if f.down.Load() || f.writesDown.Load() {
		return nil, errPartitioned
	}
	return f.LeaseInterface.Create(ctx, l, o)
}

func (f flakyLeaseInterface) Update(ctx context.Context, l *coordinationv1.Lease, o metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	if f.down.Load() || f.writesDown.Load() {
		return nil, errPartitioned
	}
	return f.LeaseInterface.Update(ctx, l, o)
}

func (f flakyLeaseInterface) Get(ctx context.Context, name string, o metav1.GetOptions) (*coordinationv1.Lease, error) {
	if f.down.Load() {
		return nil, errPartitioned
	}
	return f.LeaseInterface.Get(ctx, name, o)
}

func (f flakyLeaseInterface) List(ctx context.Context, o metav1.ListOptions) (*coordinationv1.LeaseList, error) {
	if f.down.Load() {
		return nil, errPartitioned
	}
	return f.LeaseInterface.List(ctx, o)
}

func (f flakyLeaseInterface) Delete(ctx context.Context, name string, o metav1.DeleteOptions) error {
	if f.down.Load() || f.writesDown.Load() {
		return errPartitioned
	}
	return f.LeaseInterface.Delete(ctx, name, o)
}

// cluster is a ring of members over one fake API server and one fake clock,
// stepped by hand.
type cluster struct {
	t       *testing.T
	clk     *clocktesting.FakeClock
	client  *fake.Clientset
	members map[string]*Member
	down    map[string]*atomic.Bool
	noWrite map[string]*atomic.Bool
	order   []string
}

func newCluster(t *testing.T) *cluster {
	return &cluster{
		t:       t,
		clk:     clocktesting.NewFakeClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)),
		client:  fake.NewClientset(),
		members: map[string]*Member{},
		down:    map[string]*atomic.Bool{},
		noWrite: map[string]*atomic.Bool{},
	}
}

func (c *cluster) options(extra ...Option) []Option {
	return append([]Option{WithClock(c.clk), WithLogger(logr.Discard())}, extra...)
}

func (c *cluster) add(identity string, opts ...Option) *Member {
	c.t.Helper()
	down, noWrite := &atomic.Bool{}, &atomic.Bool{}
	m, err := NewMember(flakyLeases{LeasesGetter: c.client.CoordinationV1(), down: down, writesDown: noWrite}, testNamespace, testRing, identity, c.options(opts...)...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.members[identity] = m
	c.down[identity] = down
	c.noWrite[identity] = noWrite
	c.order = append(c.order, identity)
	return m
}

// step runs one protocol step of a member and checks the invariant.
func (c *cluster) step(identity string) {
	c.t.Helper()
	c.members[identity].step(context.Background())
	c.checkDisjoint()
}

// stepAll steps every member in order, except the skipped ones.
func (c *cluster) stepAll(skip ...string) {
	c.t.Helper()
	for _, id := range c.order {
		if !slices.Contains(skip, id) {
			c.step(id)
		}
	}
}

// advance moves the clock and checks the invariant at the new instant.
func (c *cluster) advance(d time.Duration) {
	c.t.Helper()
	c.clk.Step(d)
	c.checkDisjoint()
}

// checkDisjoint asserts that no two members hold one hash at this instant,
// and that every member claims in its Lease at least what it holds: the
// claim is what keeps others off.
func (c *cluster) checkDisjoint() {
	c.t.Helper()
	held := map[string]Ranges{}
	for _, id := range c.order {
		held[id] = c.members[id].Held()
	}
	for i, a := range c.order {
		for _, b := range c.order[i+1:] {
			if both := held[a].Intersect(held[b]); !both.Empty() {
				c.t.Fatalf("at %v %s and %s both hold %d ranges (%.4f of the space), first %v",
					c.clk.Now().Format(time.TimeOnly), a, b, len(both), both.Fraction(), both[0])
			}
		}
	}
	leases, err := c.client.CoordinationV1().Leases(testNamespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	claims := map[string]Ranges{}
	for _, l := range leases.Items {
		rs, err := ParseRanges(l.Annotations[ClaimsAnnotation])
		if err == nil && l.Spec.HolderIdentity != nil {
			claims[*l.Spec.HolderIdentity] = rs
		}
	}
	for _, id := range c.order {
		m := c.members[id]
		published, ok := claims[m.Identity()]
		if !ok {
			continue // deleted behind its back; see TestLeaseLostDropsEverything
		}
		if unclaimed := held[id].Subtract(published); !unclaimed.Empty() {
			c.t.Fatalf("at %v %s holds %.4f of the space its Lease does not claim, first %v",
				c.clk.Now().Format(time.TimeOnly), id, unclaimed.Fraction(), unclaimed[0])
		}
	}
}

// converged reports whether the live members hold exactly their assigned
// shares.
func (c *cluster) converged(live ...string) bool {
	want := Assign(live)
	for _, id := range live {
		if !c.members[id].Held().Equal(want[id]) {
			return false
		}
	}
	return true
}

// settle steps the given members, a renew interval apart, until they hold
// their shares; it fails after a bound.
func (c *cluster) settle(live ...string) {
	c.t.Helper()
	for range 10 {
		for _, id := range live {
			c.step(id)
		}
		if c.converged(live...) {
			return
		}
		c.advance(DefaultRenewInterval)
	}
	c.t.Fatalf("%v did not converge: %s", live, c.describe())
}

func (c *cluster) describe() string {
	s := ""
	for _, id := range c.order {
		m := c.members[id]
		s += fmt.Sprintf("\n  %s: held %.3f members %v", id, m.Held().Fraction(), m.Members())
	}
	return s
}

func (c *cluster) lease(identity string) *coordinationv1.Lease {
	c.t.Helper()
	l, err := c.client.CoordinationV1().Leases(testNamespace).Get(context.Background(), LeaseName(testRing, identity), metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	return l
}

// leaveOn makes m leave the ring while stepping clk, on which m waits for
// its last writes to settle before it deletes its Lease.
func leaveOn(t testing.TB, m *Member, clk *clocktesting.FakeClock) {
	t.Helper()
	left := make(chan error, 1)
	go func() { left <- m.leave(context.Background()) }()
	for {
		select {
		case err := <-left:
			if err != nil {
				t.Fatal(err)
			}
			return
		case <-time.After(time.Millisecond):
			clk.Step(100 * time.Millisecond)
		}
	}
}
