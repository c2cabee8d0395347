package shardcr_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/shardcr"
	"github.com/ctrlkit/ctrlkit/shard"
)

// The fencing argument end to end, over two real members on a fake clock:
// a reconcile running when its owner's hash moves to another replica sees
// its context cancelled at once, and the other replica takes the hash up
// only after that reconcile returned.
func TestReconcileHoldsTheHandOverBack(t *testing.T) {
	clientset := fake.NewClientset()
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	newMember := func(id string) *shardcr.Member {
		m, err := shardcr.NewMember(clientset.CoordinationV1(), "kube-system", "owners", id, shard.WithClock(clk))
		require.NoError(t, err)
		return m
	}
	a, b := newMember("a"), newMember("b")

	// A namespace that b will hold once both are members.
	shares := shard.Assign([]string{"a", "b"})
	namespace := ""
	for i := 0; namespace == ""; i++ {
		if ns := fmt.Sprintf("ns-%d", i); shares["b"].Contains(shard.Hash(ns)) {
			namespace = ns
		}
	}
	h := shard.Hash(namespace)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan error, 2)
	go func() { stopped <- a.Start(ctx) }()
	stepUntil(t, clk, func() bool { return a.Holds(h) })

	entered, finish, returned := make(chan context.Context, 1), make(chan struct{}), make(chan struct{})
	inner := reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
		entered <- ctx
		<-finish
		return reconcile.Result{}, ctx.Err()
	})
	cache := crfake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
	r := shardcr.NewReconciler(inner, shardcr.New(a, shard.KeyNamespace), cache, func() client.Object { return nil }, nil, nil)
	var res reconcile.Result
	var err error
	go func() {
		defer close(returned)
		res, err = r.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: "x"}})
	}()
	guarded := <-entered

	go func() { stopped <- b.Start(ctx) }()
	stepUntil(t, clk, func() bool { return !a.Holds(h) && slices.Equal(b.Members(), []string{"a", "b"}) })
	select {
	case <-guarded.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the reconcile's context outlived its share")
	}
	// While the reconcile runs, a keeps claiming h: b does not take it up,
	// however many rounds pass (within a's drain timeout).
	for range 8 {
		waitForLoops(t, clk, 2)
		clk.Step(time.Second)
		waitForLoops(t, clk, 2) // both ran the round the step woke
		require.False(t, b.Holds(h), "b took the hash up while a's reconcile still ran")
	}

	close(finish)
	<-returned
	require.NoError(t, err, "a reconcile cut short by a hand-over is not an error")
	assert.Zero(t, res)
	stepUntil(t, clk, func() bool { return b.Holds(h) })

	cancel()
	stopAll(t, clk, stopped, 2)
}

// waitForLoops waits until n member loops wait on clk.
func waitForLoops(t *testing.T, clk *testingclock.FakeClock, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for clk.Waiters() < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d loops wait on the clock", clk.Waiters(), n)
		}
		time.Sleep(time.Millisecond)
	}
}
