package shardcr_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/shardcr"
	"github.com/ctrlkit/ctrlkit/shard"
)

// stepUntil steps clk by a second each time the member's loop waits on it,
// until done reports true.
func stepUntil(t *testing.T, clk *testingclock.FakeClock, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatal("the member did not get there")
		}
		if clk.HasWaiters() {
			clk.Step(time.Second)
		}
		time.Sleep(time.Millisecond)
	}
}

// stopAll collects n results of stopped, stepping clk meanwhile: a member
// leaving waits on its clock for its last writes to settle.
func stopAll(t *testing.T, clk *testingclock.FakeClock, stopped <-chan error, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for n > 0 {
		select {
		case err := <-stopped:
			require.NoError(t, err)
			n--
		case <-time.After(time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("the member did not stop with its context")
			}
			if clk.HasWaiters() {
				clk.Step(time.Second)
			}
		}
	}
}

// The Runnable joins the ring on every replica (no leader election), tells
// each subscriber of a new share, and leaves the ring, deleting its Lease,
// when the manager's context ends.
func TestMemberRunsAsARunnable(t *testing.T) {
	client := fake.NewClientset()
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m, err := shardcr.NewMember(client.CoordinationV1(), "kube-system", "workers", "replica-0", shard.WithClock(clk))
	require.NoError(t, err)
	assert.False(t, m.NeedLeaderElection())

	first, cancelFirst := m.Subscribe()
	defer cancelFirst()
	second, cancelSecond := m.Subscribe()
	gone, cancelGone := m.Subscribe()
	cancelGone()

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- m.Start(ctx) }()
	stepUntil(t, clk, func() bool { return m.Held().Equal(shard.FullRanges()) })

	for _, ch := range []<-chan struct{}{first, second} {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatal("a subscriber was not told of the new share")
		}
	}
	select {
	case <-gone:
		t.Fatal("a cancelled subscription was signalled")
	default:
	}
	cancelSecond()

	_, err = client.CoordinationV1().Leases("kube-system").Get(context.Background(), shard.LeaseName("workers", "replica-0"), metav1.GetOptions{})
	require.NoError(t, err, "the member keeps a Lease while it runs")

	cancel()
	stopAll(t, clk, stopped, 1)
	_, err = client.CoordinationV1().Leases("kube-system").Get(context.Background(), shard.LeaseName("workers", "replica-0"), metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the Lease is deleted on a clean leave: %v", err)
	select {
	case <-first:
	default:
		t.Fatal("leaving the ring is a change too")
	}
}
