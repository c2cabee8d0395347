package shard

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
)

func TestJoinWritesLabelledLease(t *testing.T) {
	c := newCluster(t)
	a := c.add("a")
	joinedAt := c.clk.Now()
	c.step("a")

	l := c.lease("a")
	if l.Labels[RingLabel] != testRing {
		t.Errorf("labels %v", l.Labels)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "a" {
		t.Errorf("holder %v", l.Spec.HolderIdentity)
	}
	if l.Spec.LeaseDurationSeconds == nil || *l.Spec.LeaseDurationSeconds != 15 {
		t.Errorf("duration %v", l.Spec.LeaseDurationSeconds)
	}
	if l.Spec.RenewTime == nil || !l.Spec.RenewTime.Time.Equal(joinedAt) || l.Spec.AcquireTime == nil {
		t.Errorf("renew %v acquire %v, want %v", l.Spec.RenewTime, l.Spec.AcquireTime, joinedAt)
	}
	// The first write claims nothing: it had not seen the ring yet.
	if got := l.Annotations[ClaimsAnnotation]; got != "" {
		t.Errorf("first claims %q", got)
	}
	if !a.Held().Empty() || !slices.Equal(a.Members(), []string{"a"}) {
		t.Fatalf("after one step: held %v members %v", a.Held(), a.Members())
	}

	// The second step claims the whole space first, then takes it up.
	c.step("a")
	if !a.Held().Equal(FullRanges()) {
		t.Fatalf("alone, holds %v", a.Held())
	}
	if got := c.lease("a").Annotations[ClaimsAnnotation]; got != FullRanges().String() {
		t.Errorf("claims %q", got)
	}
}

func TestRenewKeepsRangesAndLapseDropsThem(t *testing.T) {
	c := newCluster(t)
	a := c.add("a")
	c.settle("a")

	for range 5 {
		c.advance(DefaultRenewInterval)
		c.step("a")
		if got := c.lease("a").Spec.RenewTime.Time; !got.Equal(c.clk.Now()) {
			t.Fatalf("renewTime %v, want %v", got, c.clk.Now())
		}
		if !a.Holds(0) {
			t.Fatal("lost its range while renewing")
		}
	}
	// No renewal: trusted up to duration − margin (12s) after the last one.
	c.advance(DefaultLeaseDuration - DefaultSafetyMargin - time.Millisecond)
	if !a.Holds(0) || a.Held().Empty() {
		t.Fatal("gave up before duration − margin")
	}
	c.advance(time.Millisecond)
	if a.Holds(0) || !a.Held().Empty() {
		t.Fatal("still holds after duration − margin without renewal")
	}
}

func TestExpiredMemberLeavesTheRing(t *testing.T) {
	c := newCluster(t)
	a := c.add("a")
	c.add("b")
	c.settle("a", "b")
	if !slices.Equal(a.Members(), []string{"a", "b"}) {
		t.Fatalf("members %v", a.Members())
	}

	// b stops renewing. Its Lease is fresh for 15s after a first saw its
	// last renewal, which a's next list did, up to a renew interval later.
	for elapsed := time.Duration(0); elapsed < DefaultLeaseDuration+DefaultRenewInterval; elapsed += DefaultRenewInterval {
		c.advance(DefaultRenewInterval)
		c.step("a")
		if c.clk.Now().Before(c.lease("b").Spec.RenewTime.Add(DefaultLeaseDuration)) && !slices.Contains(a.Members(), "b") {
			t.Fatalf("b dropped while fresh, at %v", c.clk.Now())
		}
	}
	if slices.Contains(a.Members(), "b") {
		t.Fatalf("b still a member after expiry: %v", a.Members())
	}
	c.settle("a")
}

func TestLeaveDeletesLease(t *testing.T) {
	c := newCluster(t)
	c.add("a")
	b := c.add("b")
	c.settle("a", "b")
	leaveOn(t, b, c.clk)
	if !b.Held().Empty() {
		t.Fatal("holds after leaving")
	}
	_, err := c.client.CoordinationV1().Leases(testNamespace).Get(context.Background(), LeaseName(testRing, "b"), metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("Lease after leave: %v", err)
	}
	// a takes over without waiting for an expiry.
	c.settle("a")
}

func TestOtherRingsAndStrangeLeasesAreIgnored(t *testing.T) {
	c := newCluster(t)
	a := c.add("a")
	now := metav1.NewMicroTime(c.clk.Now())
	seconds := int32(15)
	strangers := []*coordinationv1.Lease{
		// another ring in the same namespace
		{ObjectMeta: metav1.ObjectMeta{Name: "other-x", Labels: map[string]string{RingLabel: "other"}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("x"), RenewTime: &now, LeaseDurationSeconds: &seconds}},
		// our ring, but never renewed
		{ObjectMeta: metav1.ObjectMeta{Name: "ring-y", Labels: map[string]string{RingLabel: testRing}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("y"), LeaseDurationSeconds: &seconds}},
		// our ring, without a holder
		{ObjectMeta: metav1.ObjectMeta{Name: "ring-z", Labels: map[string]string{RingLabel: testRing}},
			Spec: coordinationv1.LeaseSpec{RenewTime: &now, LeaseDurationSeconds: &seconds}},
	}
	for _, l := range strangers {
		if _, err := c.client.CoordinationV1().Leases(testNamespace).Create(context.Background(), l, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.settle("a")
	if !slices.Equal(a.Members(), []string{"a"}) {
		t.Fatalf("members %v", a.Members())
	}
}

// A peer whose claims can't be read is taken to claim everything: nothing
// is taken up until its Lease expires.
func TestUnreadableClaimsBlockUntilExpiry(t *testing.T) {
	c := newCluster(t)
	a := c.add("a")
	now := metav1.NewMicroTime(c.clk.Now())
	seconds := int32(15)
	bad := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "ring-old", Labels: map[string]string{RingLabel: testRing},
			Annotations: map[string]string{ClaimsAnnotation: "not ranges"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("old"), RenewTime: &now, LeaseDurationSeconds: &seconds},
	}
	if _, err := c.client.CoordinationV1().Leases(testNamespace).Create(context.Background(), bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for c.clk.Now().Before(now.Add(15 * time.Second)) {
		c.step("a")
		if !a.Held().Empty() {
			t.Fatalf("took up %v while a fresh Lease claims it could hold anything", a.Held())
		}
		c.advance(DefaultRenewInterval)
	}
	c.settle("a")
}

func ptr[T any](v T) *T { return &v }

func TestLeaseLostDropsEverything(t *testing.T) {
	for _, how := range []string{"conflict", "deleted"} {
		t.Run(how, func(t *testing.T) {
			c := newCluster(t)
			a := c.add("a")
			c.settle("a")
			switch how {
			case "conflict":
				c.client.PrependReactor("update", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "ring-a", nil)
				})
			case "deleted":
				if err := c.client.CoordinationV1().Leases(testNamespace).Delete(context.Background(), LeaseName(testRing, "a"), metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			c.advance(time.Second)
			c.step("a")
			if !a.Held().Empty() {
				t.Fatalf("still holds %v after its Lease was changed by someone else", a.Held())
			}
			if how == "conflict" {
				c.client.ReactionChain = c.client.ReactionChain[1:]
				// The Lease of a's earlier self is still fresh with claims:
				// a waits for it to expire before it takes anything up.
				c.step("a")
				if !a.Held().Empty() {
					t.Fatalf("rejoined over its own fresh Lease and took up %v at once", a.Held())
				}
				c.advance(DefaultLeaseDuration)
			}
			c.settle("a")
		})
	}
}

// A new incarnation of a member keeps the claims of the old one, which may
// still be running, until the old Lease would expire: neither it nor anyone
// else takes them up before.
func TestRestartWaitsForEarlierIncarnation(t *testing.T) {
	c := newCluster(t)
	c.add("a")
	c.settle("a")
	renewed := c.lease("a").Spec.RenewTime.Time

	// The old incarnation stays in the cluster under another key, never
	// stepped again, so the invariant still covers what it holds.
	c.members["a (old)"], c.order[0] = c.members["a"], "a (old)"
	again := c.add("a")
	b := c.add("b")
	for c.clk.Now().Before(renewed.Add(DefaultLeaseDuration)) {
		c.step("a")
		c.step("b")
		if !again.Held().Empty() || !b.Held().Empty() {
			t.Fatalf("at %v, while the old incarnation's Lease is fresh, the new one holds %v and b %v",
				c.clk.Now(), again.Held().Fraction(), b.Held().Fraction())
		}
		c.advance(DefaultRenewInterval)
	}
	c.settle("a", "b")
}

func TestNewMemberValidatesNames(t *testing.T) {
	c := newCluster(t)
	for _, tc := range []struct{ ring, identity string }{
		{"", "a"},
		{"ring", ""},
		{"bad ring", "a"},
		{"ring", "Upper_Case"},
		{"ring", strings.Repeat("x", 260)},
	} {
		if _, err := NewMember(c.client.CoordinationV1(), testNamespace, tc.ring, tc.identity); err == nil {
			t.Errorf("ring %q identity %q: no error", tc.ring, tc.identity)
		}
	}
}

func TestOptionsPanicOnNonsense(t *testing.T) {
	c := newCluster(t)
	for name, fn := range map[string]func(){
		"nil clock":           func() { WithClock(nil) },
		"fractional duration": func() { WithLeaseDuration(1500 * time.Millisecond) },
		"zero renew":          func() { WithRenewInterval(0) },
		"negative margin":     func() { WithSafetyMargin(-1) },
		"zero write timeout":  func() { WithWriteTimeout(0) },
		"zero drain":          func() { WithDrainTimeout(0) },
		"zero slots":          func() { WithSlots(0) },
		"too many slots":      func() { WithSlots(MaxSlots + 1) },
		"Run twice": func() {
			m, _ := NewMember(c.client.CoordinationV1(), "ns", "r", "a")
			m.running.Store(true) // as if Run were running
			_ = m.Run(context.Background())
		},
		"load factor below 1":  func() { WithLoadFactor(0.9) },
		"nil client":           func() { _, _ = NewMember(nil, "ns", "r", "a") },
		"renew too slow":       func() { _, _ = NewMember(c.client.CoordinationV1(), "ns", "r", "a", WithRenewInterval(10*time.Second)) },
		"nil context for Run":  func() { m, _ := NewMember(c.client.CoordinationV1(), "ns", "r", "a"); _ = m.Run(nil) },  //nolint:staticcheck // testing the panic
		"nil context to Guard": func() { m, _ := NewMember(c.client.CoordinationV1(), "ns", "r", "a"); m.Guard(nil, 0) }, //nolint:staticcheck // testing the panic
	} {
		func() {
			defer func() {
				r := recover()
				if r == nil {
					t.Errorf("%s: no panic", name)
				} else if s, _ := r.(string); !strings.HasPrefix(s, "shard: ") {
					t.Errorf("%s: panic %v without the package prefix", name, r)
				}
			}()
			fn()
		}()
	}
	// nil options are ignored
	if _, err := NewMember(c.client.CoordinationV1(), "ns", "r", "a", nil); err != nil {
		t.Fatal(err)
	}
}
