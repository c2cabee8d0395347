package shard

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// Join, leave and pause, stepping every member a renew interval apart; the
// cluster checks after every step and every tick that no two members hold
// one hash.
func TestHandOverJoinLeavePause(t *testing.T) {
	c := newCluster(t)
	c.add("a")
	c.settle("a")

	c.add("b")
	c.settle("a", "b")
	c.add("c")
	c.settle("a", "b", "c")

	// b pauses (a long GC pause, a stopped VM): it does nothing, a and c
	// carry on and take its share once its Lease expired.
	b := c.members["b"]
	lastRenew := c.lease("b").Spec.RenewTime.Time
	for c.clk.Now().Before(lastRenew.Add(DefaultLeaseDuration + 2*DefaultRenewInterval)) {
		c.advance(DefaultRenewInterval)
		c.stepAll("b")
	}
	if !b.Held().Empty() {
		t.Fatalf("paused b still holds %v", b.Held())
	}
	c.settle("a", "c")

	// b wakes up: it must not work on its old share, and gets a share back
	// only through the protocol.
	c.step("b")
	c.settle("a", "b", "c")

	// c leaves cleanly.
	leaveOn(t, c.members["c"], c.clk)
	c.settle("a", "b")
}

// A partitioned member can't renew: it must stop before the others may take
// over, and rejoin through the protocol when the network heals.
func TestHandOverPartition(t *testing.T) {
	c := newCluster(t)
	for _, id := range []string{"a", "b", "c"} {
		c.add(id)
	}
	c.settle("a", "b", "c")
	c.down["c"].Store(true)
	for range 8 {
		c.advance(DefaultRenewInterval)
		c.stepAll() // c keeps trying and failing
	}
	if !c.members["c"].Held().Empty() {
		t.Fatalf("partitioned c holds %v", c.members["c"].Held())
	}
	c.settle("a", "b")
	c.down["c"].Store(false)
	c.settle("a", "b", "c")
}

// A member that gives a range up keeps claiming it while a Guard over it
// runs; the newcomer takes it up only after the Guard is done.
func TestHandOverWaitsForRunningWork(t *testing.T) {
	c := newCluster(t)
	a := c.add("a", WithDrainTimeout(time.Minute))
	c.settle("a")

	h, wctx, done := guardNewcomersHash(t, a)

	b := c.add("b")
	for range 6 {
		c.stepAll()
		c.advance(DefaultRenewInterval)
		if b.Holds(h) {
			t.Fatal("b took up h while a's guarded work on it was running")
		}
	}
	if a.Holds(h) {
		t.Fatal("a still holds h after b joined")
	}
	if b.Held().Empty() {
		t.Fatal("b took up nothing while only one range was busy")
	}
	if wctx.Err() == nil {
		t.Fatal("guard context not cancelled when a gave h up")
	}
	done()
	done() // idempotent
	c.settle("a", "b")
	if !b.Holds(h) {
		t.Fatal("b never took h up")
	}
	if _, _, ok := a.Guard(context.Background(), h); ok {
		t.Fatal("a got a guard on a hash it gave up")
	}
}

// A write sent under a Guard may land after the Guard is done (its request
// cancelled, or abandoned at its deadline, while the API server goes on
// storing it): the member keeps claiming the range for the safety margin
// after the Guard ended, so the next holder lists it only after that.
func TestHandOverWaitsForWritesToSettle(t *testing.T) {
	c := newCluster(t)
	a := c.add("a", WithDrainTimeout(time.Minute))
	c.settle("a")
	h, _, done := guardNewcomersHash(t, a)
	b := c.add("b")
	for range 6 {
		c.stepAll()
		c.advance(DefaultRenewInterval)
	}
	if a.Holds(h) || b.Holds(h) {
		t.Fatal("h held while a's guarded work on it runs")
	}
	done()
	ended := c.clk.Now()
	step := DefaultSafetyMargin / 4
	for c.clk.Now().Before(ended.Add(DefaultSafetyMargin - step)) {
		c.stepAll()
		if b.Holds(h) {
			t.Fatalf("b took h up %v after a's guard over it ended, within the safety margin %v", c.clk.Since(ended), DefaultSafetyMargin)
		}
		c.advance(step)
	}
	c.settle("a", "b")
	if !b.Holds(h) {
		t.Fatal("b never took h up")
	}
}

// guardNewcomersHash takes a's Guard over a hash that b will own once it
// joins.
func guardNewcomersHash(t *testing.T, a *Member) (uint64, context.Context, context.CancelFunc) {
	t.Helper()
	h := Assign([]string{"a", "b"})["b"][0].First
	wctx, done, ok := a.Guard(context.Background(), h)
	if !ok {
		t.Fatal("a does not hold h alone")
	}
	return h, wctx, done
}

func TestGuardFollowsValidity(t *testing.T) {
	c := newCluster(t)
	a := c.add("a")
	c.settle("a")
	wctx, done, ok := a.Guard(context.Background(), 42)
	defer done()
	if !ok {
		t.Fatal("no guard")
	}
	// Renewing for twice the Lease duration keeps the guard alive: a long
	// batch is not cut while its member stays valid.
	for range 2 * int(DefaultLeaseDuration/DefaultRenewInterval) {
		c.advance(DefaultRenewInterval)
		c.step("a")
	}
	time.Sleep(10 * time.Millisecond) // let the guard's timer goroutine run
	if err := wctx.Err(); err != nil {
		t.Fatalf("guard ended while its member kept renewing: %v", err)
	}
	// Cut off from the API server, a stops renewing; without any step of
	// its own, the guard ends once the validity has passed.
	c.down["a"].Store(true)
	c.advance(DefaultLeaseDuration)
	select {
	case <-wctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("guard outlived its member's validity")
	}
}

// Random schedules of steps, ticks, pauses, partitions, joins and leaves;
// the invariant is checked after each action. At the end everyone heals and
// the ring converges to the assignment of its members.
func TestHandOverRandomSchedules(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 99))
			c := newCluster(t)
			paused := map[string]bool{}
			left := map[string]bool{}
			next := 0
			join := func() {
				c.add(fmt.Sprintf("m%d", next))
				next++
			}
			for range 3 {
				join()
			}
			live := func() []string {
				var ids []string
				for _, id := range c.order {
					if !left[id] {
						ids = append(ids, id)
					}
				}
				return ids
			}
			for range 400 {
				ids := live()
				id := ids[r.IntN(len(ids))]
				switch k := r.IntN(20); {
				case k < 10:
					if !paused[id] {
						c.step(id)
					}
				case k < 14:
					c.advance(time.Duration(1+r.IntN(4000)) * time.Millisecond)
				case k < 16:
					paused[id] = !paused[id]
				case k < 17:
					c.down[id].Store(!c.down[id].Load())
				case k < 18:
					c.noWrite[id].Store(!c.noWrite[id].Load())
				case k < 19:
					if len(c.order) < 8 {
						join()
					}
				default:
					if len(ids) > 1 && !paused[id] && !c.down[id].Load() && !c.noWrite[id].Load() {
						leaveOn(t, c.members[id], c.clk)
						left[id] = true
					}
				}
			}
			for _, id := range c.order {
				paused[id] = false
				c.down[id].Store(false)
				c.noWrite[id].Store(false)
			}
			// Leases of members that left or crashed mid-way may still be
			// fresh; give them time to expire while the rest keeps stepping.
			for range 6 {
				for _, id := range live() {
					c.step(id)
				}
				c.advance(DefaultRenewInterval)
			}
			ids := live()
			slices.Sort(ids)
			c.settle(ids...)
		})
	}
}

// A member whose Lease writes fail takes nothing up, even though it can
// still list: what it has not published, it must not hold.
func TestNoTakeUpWithoutPublishedClaim(t *testing.T) {
	c := newCluster(t)
	c.add("a")
	c.settle("a")
	b := c.add("b")
	c.step("b") // b's Lease exists, claiming nothing yet
	c.noWrite["b"].Store(true)
	for range 6 {
		c.advance(DefaultRenewInterval)
		c.stepAll()
		if !b.Held().Empty() {
			t.Fatalf("b holds %.4f of the space without having claimed it", b.Held().Fraction())
		}
	}
	c.noWrite["b"].Store(false)
	c.settle("a", "b")
}

// slowUpdates runs a function inside the next Lease update before it lands,
// as a write that takes that long would.
type slowUpdates struct {
	coordinationv1client.LeaseInterface
	meanwhile func()
}

func (s *slowUpdates) Update(ctx context.Context, l *coordinationv1.Lease, o metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	if f := s.meanwhile; f != nil {
		s.meanwhile = nil
		f()
	}
	return s.LeaseInterface.Update(ctx, l, o)
}

// A renewal that lands after its member's validity lapsed must not carry
// the member's ranges on: meanwhile the others found its Lease expired and
// took them over.
func TestRenewalAfterLapseStopsRanges(t *testing.T) {
	c := newCluster(t)
	a := c.add("a", WithWriteTimeout(6*time.Second))
	c.add("b", WithWriteTimeout(6*time.Second))
	c.settle("a", "b")
	held := a.Held()

	// a misses two steps (a pause), then renews just before its validity
	// ends, and the write takes 5.5s, within its write timeout.
	c.advance(DefaultRenewInterval)
	c.step("b")
	c.advance(DefaultRenewInterval)
	c.step("b")
	c.advance(DefaultLeaseDuration - DefaultSafetyMargin - 2*DefaultRenewInterval - 500*time.Millisecond)
	a.store.leases = &slowUpdates{LeaseInterface: a.store.leases, meanwhile: func() {
		c.advance(4500 * time.Millisecond)
		c.step("b") // a's Lease unchanged for 16s: expired
		c.advance(time.Second)
		c.step("b") // takes up a's share
		if !c.members["b"].Held().Equal(FullRanges()) {
			t.Fatalf("b holds %.3f while a's Lease looks expired", c.members["b"].Held().Fraction())
		}
	}}
	c.step("a")
	if !a.Held().Intersect(held).Empty() {
		t.Fatalf("a carries on with %.3f of its share after a renewal that landed late", a.Held().Intersect(held).Fraction())
	}
	c.settle("a", "b")
}
