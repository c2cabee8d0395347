package shard

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	k8stesting "k8s.io/client-go/testing"
)

// slowLeases runs hook inside every Lease update, before the write: a
// renewal stuck behind a client-side rate limiter or a slow API server,
// during which the test moves the clock.
type slowLeases struct {
	coordinationv1client.LeasesGetter
	hook func()
}

func (s slowLeases) Leases(namespace string) coordinationv1client.LeaseInterface {
	return slowLeaseInterface{LeaseInterface: s.LeasesGetter.Leases(namespace), hook: s.hook}
}

type slowLeaseInterface struct {
	coordinationv1client.LeaseInterface
	hook func()
}

func (s slowLeaseInterface) Update(ctx context.Context, l *coordinationv1.Lease, o metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	s.hook()
	return s.LeaseInterface.Update(ctx, l, o)
}

// recordChanges is an OnChange that keeps every announced share.
type recordChanges struct {
	mu   sync.Mutex
	seen []Ranges
}

func (r *recordChanges) record(held Ranges) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, held)
}

func (r *recordChanges) announced() []Ranges {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Ranges(nil), r.seen...)
}

// A renewal that comes back after the member's validity has passed, but
// early enough to extend it, must not hide the lapse: while it was out, Holds
// was false and work was turned away. The member gives its ranges up,
// announces it, and announces them again once it has taken them back, so a
// subscriber redoes the work; Wants stays true throughout, so a caller
// turned away knows to try again.
func TestLapseDuringRenewalIsAnnounced(t *testing.T) {
	c := newCluster(t)
	changes := &recordChanges{}
	var stall bool
	hook := func() {
		if stall {
			stall = false
			// Past the validity of the last renewal, and short of that of
			// this one (stamped at the step's start).
			c.clk.Step(DefaultLeaseDuration - DefaultSafetyMargin - DefaultRenewInterval + time.Second)
		}
	}
	m, err := NewMember(slowLeases{LeasesGetter: c.client.CoordinationV1(), hook: hook}, testNamespace, testRing, "a",
		c.options(WithOnChange(changes.record))...)
	if err != nil {
		t.Fatal(err)
	}
	c.members["a"], c.order = m, append(c.order, "a")
	c.settle("a")
	whole := m.Held()
	if whole.Fraction() != 1 {
		t.Fatalf("a alone holds %v of the space", whole.Fraction())
	}
	before := len(changes.announced())

	c.advance(DefaultRenewInterval)
	stall = true
	m.step(context.Background())
	if stall {
		t.Fatal("the renewal did not stall")
	}
	if !m.Held().Empty() {
		t.Fatalf("after a renewal that came back too late, a still holds %v", m.Held().Fraction())
	}
	if !m.Wants(whole[0].First) {
		t.Fatal("a does not want back the ranges it held before the lapse")
	}
	c.settle("a")
	seen := changes.announced()[before:]
	if len(seen) < 2 || !seen[0].Empty() || !seen[len(seen)-1].Equal(whole) {
		t.Fatalf("announced %d changes after the lapse (%v), want the loss and then the whole space", len(seen), seen)
	}
}

// A lapse found at the start of a step is announced even when the step then
// fails to list the ring.
func TestLapseAnnouncedWhenTheListFails(t *testing.T) {
	c := newCluster(t)
	changes := &recordChanges{}
	m := c.add("a", WithOnChange(changes.record))
	c.settle("a")
	before := len(changes.announced())

	// Pause a past its validity; then it renews, but its list fails.
	c.advance(DefaultLeaseDuration)
	m.store.leases = failingList{LeaseInterface: m.store.leases}
	m.step(context.Background())
	seen := changes.announced()[before:]
	if len(seen) != 1 || !seen[0].Empty() {
		t.Fatalf("announced %v after a lapse and a failed list, want the loss", seen)
	}
}

// Wants is false for a hash of another member's share, so work turned away
// there is left to that member.
func TestWantsFollowsTheShare(t *testing.T) {
	c := newCluster(t)
	a, b := c.add("a"), c.add("b")
	c.settle("a", "b")
	share := Assign([]string{"a", "b"})
	for _, r := range share["a"] {
		if !a.Wants(r.First) || b.Wants(r.First) {
			t.Fatalf("hash %x of a's share: a wants %v, b wants %v", r.First, a.Wants(r.First), b.Wants(r.First))
		}
	}
}

type failingList struct {
	coordinationv1client.LeaseInterface
}

func (f failingList) List(context.Context, metav1.ListOptions) (*coordinationv1.LeaseList, error) {
	return nil, errPartitioned
}

// A renewal the API server stored but answered with an error (a timeout, a
// broken connection) is not another writer: the next renewal's conflict is
// checked against it, and the member keeps its ranges. Taking the conflict
// for a lost Lease dropped every range and rejoined, which under a slow API
// server made the ring hand its shares around for nothing.
func TestRenewalStoredButUnansweredKeepsTheLease(t *testing.T) {
	c := newCluster(t)
	a := c.add("a")
	c.settle("a")
	held := a.Held()

	// The fake tracker keeps no resource versions: this reactor does, so
	// an update from a stale copy conflicts as on a real API server.
	stored, version := 0, 100
	c.client.PrependReactor("update", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		l := action.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
		cur, err := c.client.Tracker().Get(action.GetResource(), action.GetNamespace(), l.Name)
		if err != nil {
			return true, nil, err
		}
		if stored > 0 && l.ResourceVersion != cur.(*coordinationv1.Lease).ResourceVersion {
			return true, nil, apierrors.NewConflict(action.GetResource().GroupResource(), l.Name, nil)
		}
		version++
		l.ResourceVersion = fmt.Sprint(version)
		if err := c.client.Tracker().Update(action.GetResource(), l, action.GetNamespace()); err != nil {
			return true, nil, err
		}
		stored++
		if stored == 1 {
			// Stored, then answered as a server that timed out.
			return true, nil, apierrors.NewTimeoutError("the write may have been stored", 1)
		}
		return true, l, nil
	})
	c.advance(DefaultRenewInterval)
	c.step("a") // stored, answered with a timeout
	c.advance(DefaultRenewInterval)
	c.step("a") // conflicts with the stored write
	if !a.Held().Equal(held) {
		t.Fatalf("after a renewal stored but unanswered, a holds %.3f of the space, want %.3f", a.Held().Fraction(), held.Fraction())
	}
	if got := c.lease("a").Spec.RenewTime.Time; !got.Equal(c.clk.Now()) {
		t.Fatalf("the Lease was renewed at %v, want %v", got, c.clk.Now())
	}
}

// A renewal stored but unanswered just before the member leaves moved the
// version its delete is conditional on: the member still deletes its Lease.
func TestLeaveAfterARenewalStoredButUnanswered(t *testing.T) {
	c := newCluster(t)
	a := c.add("a")
	c.settle("a")
	version := 100
	c.client.PrependReactor("update", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		l := action.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
		version++
		l.ResourceVersion = fmt.Sprint(version)
		if err := c.client.Tracker().Update(action.GetResource(), l, action.GetNamespace()); err != nil {
			return true, nil, err
		}
		if version == 101 {
			return true, l, nil // answered: the member knows this version
		}
		return true, nil, apierrors.NewTimeoutError("the write may have been stored", 1)
	})
	c.client.PrependReactor("delete", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		d := action.(k8stesting.DeleteAction)
		cur, err := c.client.Tracker().Get(action.GetResource(), action.GetNamespace(), d.GetName())
		if err != nil {
			return true, nil, err
		}
		if pre := d.GetDeleteOptions().Preconditions; pre != nil && pre.ResourceVersion != nil && *pre.ResourceVersion != cur.(*coordinationv1.Lease).ResourceVersion {
			return true, nil, apierrors.NewConflict(action.GetResource().GroupResource(), d.GetName(), nil)
		}
		return false, nil, nil
	})
	c.advance(DefaultRenewInterval)
	c.step("a") // answered
	c.advance(DefaultRenewInterval)
	c.step("a") // stored, answered with a timeout
	leaveOn(t, a, c.clk)
	if _, err := c.client.CoordinationV1().Leases(testNamespace).Get(context.Background(), LeaseName(testRing, "a"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Lease after leaving: %v", err)
	}
}

// A lapse and the return of the same ranges count a take-up, so a
// subscriber that sees the same share before and after still knows to list
// it afresh.
func TestTakeUpsCountReturns(t *testing.T) {
	c := newCluster(t)
	m := c.add("a")
	c.settle("a")
	before, held := m.TakeUps(), m.Held()
	c.advance(DefaultLeaseDuration) // a lapse
	c.settle("a")
	if !m.Held().Equal(held) {
		t.Fatalf("a came back with %.3f of the space, want %.3f", m.Held().Fraction(), held.Fraction())
	}
	if m.TakeUps() == before {
		t.Fatal("the same share given up and taken back counted no take-up")
	}
	c.advance(DefaultRenewInterval)
	c.step("a")
	if got := m.TakeUps(); got != before+1 {
		t.Fatalf("%d take-ups after one lapse and a quiet step, want %d", got-before, 1)
	}
}
