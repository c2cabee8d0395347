package shard

import (
	"context"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Run drives the protocol on the clock's timers and leaves the ring when its
// context ends, deleting its Lease and leaving no goroutine behind.
func TestRunJoinsHandsOverAndLeaves(t *testing.T) {
	c := newCluster(t)
	var mu sync.Mutex
	changes := map[string]int{}
	onChange := func(id string) Option {
		return WithOnChange(func(Ranges) { mu.Lock(); changes[id]++; mu.Unlock() })
	}
	a := c.add("a", onChange("a"))
	b := c.add("b", onChange("b"))

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, m := range []*Member{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- m.Run(ctx) }()
	}

	// Step the fake clock whenever both loops wait on it, until the shares
	// are taken up.
	converged := func() bool { return c.converged("a", "b") }
	for i := 0; !converged(); i++ {
		if i > 2000 {
			t.Fatalf("no convergence: %s", c.describe())
		}
		waitForWaiters(t, c, 2)
		c.clk.Step(time.Second)
		if !a.Held().Intersect(b.Held()).Empty() {
			t.Fatal("a and b hold one hash")
		}
	}
	// Leaving waits on the clock for the last writes to settle.
	cancel()
	stopped := make(chan struct{})
	go func() { wg.Wait(); close(stopped) }()
	for waiting := true; waiting; {
		select {
		case <-stopped:
			waiting = false
		case <-time.After(time.Millisecond):
			c.clk.Step(100 * time.Millisecond)
		}
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"a", "b"} {
		_, err := c.client.CoordinationV1().Leases(testNamespace).Get(context.Background(), LeaseName(testRing, id), metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("Lease of %s after Run: %v", id, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// Each took up its share (one change or more) and gave it up on leaving.
	if changes["a"] < 2 || changes["b"] < 2 {
		t.Fatalf("change callbacks %v", changes)
	}
}

func waitForWaiters(t *testing.T, c *cluster, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.clk.Waiters() < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d loops wait on the clock", c.clk.Waiters(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Leaving waits for running work before it deletes the Lease; work that
// outlives the drain timeout leaves the Lease to expire instead, so nobody
// takes over while it may still write.
func TestLeaveWaitsForGuards(t *testing.T) {
	for _, finish := range []bool{true, false} {
		t.Run(map[bool]string{true: "work finishes", false: "work hangs"}[finish], func(t *testing.T) {
			c := newCluster(t)
			a := c.add("a")
			c.settle("a")
			wctx, done, ok := a.Guard(context.Background(), 7)
			if !ok {
				t.Fatal("no guard")
			}
			defer done()
			left := make(chan error, 1)
			go func() { left <- a.leave(context.Background()) }()

			select {
			case <-wctx.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("leaving did not cancel the guard's context")
			}
			if a.Holds(7) {
				t.Fatal("still holds while leaving")
			}
			select {
			case err := <-left:
				t.Fatalf("left before the work ended: %v", err)
			case <-time.After(20 * time.Millisecond):
			}
			var err error
			if finish {
				done()
			}
			// Step until leave's timer has fired (the drain timeout when the
			// work hangs, the settling of its writes when it finished): it
			// may not be armed yet, and the guard's own timer is on this
			// clock too.
		stepping:
			for {
				c.clk.Step(DefaultLeaseDuration)
				select {
				case err = <-left:
					break stepping
				case <-time.After(5 * time.Millisecond):
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.client.CoordinationV1().Leases(testNamespace).Get(context.Background(), LeaseName(testRing, "a"), metav1.GetOptions{})
			if finish && !apierrors.IsNotFound(err) {
				t.Fatalf("Lease after a clean leave: %v", err)
			}
			if !finish && err != nil {
				t.Fatalf("Lease deleted while work may still run: %v", err)
			}
		})
	}
}
