package process

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// failingLeases makes every Lease update fail once fail is called, and
// counts the updates that clear the holder (releases).
func failingLeases(client *fake.Clientset) (fail func(), releases func() int) {
	var (
		mu       sync.Mutex
		failing  bool
		released int
	)
	client.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		lease := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease)
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			released++
		}
		if failing {
			return true, nil, errors.New("apiserver unreachable")
		}
		return false, nil, nil
	})
	return func() { mu.Lock(); failing = true; mu.Unlock() },
		func() int { mu.Lock(); defer mu.Unlock(); return released }
}

var shortLease = LeaderElection{Enabled: true, Namespace: "kube-system", Name: "l",
	LeaseDuration: 2 * time.Second, RenewDeadline: 300 * time.Millisecond, RetryPeriod: 50 * time.Millisecond}

// TestLeaseLostStopsAtOnce: when renewals fail, work's context is cancelled
// at once, RunWithLease returns ErrLeaseLost, and the Lease is not released
// (no update clearing the holder is even attempted).
func TestLeaseLostStopsAtOnce(t *testing.T) {
	client := fake.NewClientset()
	fail, releases := failingLeases(client)
	started := make(chan struct{})
	var cancelledAfter time.Duration
	var lostAt time.Time
	done := make(chan error, 1)
	go func() {
		done <- RunWithLease(context.Background(), nil, client, shortLease, nil, func(wctx context.Context) {
			close(started)
			<-wctx.Done()
			cancelledAfter = time.Since(lostAt)
		})
	}()
	<-started
	lostAt = time.Now()
	fail()
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrLeaseLost)
	case <-time.After(10 * time.Second):
		t.Fatal("RunWithLease did not return after the lease was lost")
	}
	assert.Less(t, cancelledAfter, shortLease.RenewDeadline+time.Second, "work stopped within the renew deadline")
	assert.Zero(t, releases(), "a lost lease is never released")
}

// TestLeaseLostReturnsEvenIfWorkHangs: work that ignores its context (a
// call stuck for good) does not keep a process that lost its Lease alive:
// RunWithLease returns ErrLeaseLost within the renew deadline plus the
// grace, so the binary exits, as kube-controller-manager does.
func TestLeaseLostReturnsEvenIfWorkHangs(t *testing.T) {
	client := fake.NewClientset()
	fail, _ := failingLeases(client)
	started, hung, workEnded := make(chan struct{}), make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- RunWithLease(context.Background(), nil, client, shortLease, nil, func(context.Context) {
			defer close(workEnded)
			close(started)
			<-hung // ignores its context
		})
	}()
	<-started
	lostFrom := time.Now()
	fail()
	bound := shortLease.RenewDeadline + lostLeaseGrace + 3*time.Second
	returned := false
	select {
	case err := <-done:
		returned = true
		require.ErrorIs(t, err, ErrLeaseLost)
		assert.Less(t, time.Since(lostFrom), bound)
	case <-time.After(bound):
		t.Errorf("RunWithLease still waiting for hung work %s after the renewals began to fail", bound)
	}
	close(hung)
	<-workEnded
	if !returned {
		assert.ErrorIs(t, <-done, ErrLeaseLost, "once the work ended")
	}
}

// TestLeaseReleasedAfterWork checks the shutdown order: work drains first,
// then the Lease is released (its holder cleared) for a successor.
func TestLeaseReleasedAfterWork(t *testing.T) {
	client := fake.NewClientset()
	cfg := shortLease
	cfg.LeaseDuration, cfg.RenewDeadline = 15*time.Second, 10*time.Second
	ctx, cancel := context.WithCancel(context.Background())
	var workEnded time.Time
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- RunWithLease(ctx, nil, client, cfg, nil, func(wctx context.Context) {
			close(started)
			<-wctx.Done()
			time.Sleep(50 * time.Millisecond) // a drain
			workEnded = time.Now()
		})
	}()
	<-started
	holder := func() string {
		lease, err := client.CoordinationV1().Leases("kube-system").Get(context.Background(), "l", metav1.GetOptions{})
		require.NoError(t, err)
		if lease.Spec.HolderIdentity == nil {
			return ""
		}
		return *lease.Spec.HolderIdentity
	}
	require.NotEmpty(t, holder())
	cancel()
	require.NoError(t, <-done)
	assert.False(t, workEnded.IsZero())
	assert.Empty(t, holder(), "lease released")
}

// TestStandbyStopsWithoutWork: a drain while standing by returns at once,
// and work never runs.
func TestStandbyStopsWithoutWork(t *testing.T) {
	client := fake.NewClientset()
	other := "someone-else"
	now := metav1.NewMicroTime(time.Now())
	_, err := client.CoordinationV1().Leases("kube-system").Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "l"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &other, LeaseDurationSeconds: new(int32(3600)),
			AcquireTime: &now, RenewTime: &now},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	drain := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- RunWithLease(context.Background(), drain, client, shortLease, nil, func(context.Context) {
			t.Error("work ran without the lease")
		})
	}()
	time.Sleep(200 * time.Millisecond)
	close(drain)
	require.NoError(t, <-done)
}

func TestLeaderElectionValidate(t *testing.T) {
	assert.NoError(t, LeaderElection{}.Validate(), "disabled")
	assert.Error(t, LeaderElection{Enabled: true, Namespace: "ns"}.Validate(), "no name")
	assert.NoError(t, shortLease.Validate())
}

func TestLeaderElectionAccess(t *testing.T) {
	assert.Empty(t, LeaderElection{Namespace: "ns", Name: "lock"}.Access(), "disabled")
	var got []string
	for _, a := range (LeaderElection{Enabled: true, Namespace: "ns", Name: "lock"}).Access() {
		got = append(got, a.String())
	}
	assert.Equal(t, []string{
		`get resource "leases" in API group "coordination.k8s.io" named "lock" in namespace "ns"`,
		`update resource "leases" in API group "coordination.k8s.io" named "lock" in namespace "ns"`,
		`create resource "leases" in API group "coordination.k8s.io" in namespace "ns"`,
	}, got)
}
