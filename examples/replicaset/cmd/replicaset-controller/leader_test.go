package main

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestLeaseLostReturnsEvenIfWorkHangs: work that ignores its context (a
// call stuck for good) does not keep a process that lost its lease alive.
// runWithLease returns errLeaseLost within the renew deadline plus the
// grace, so the binary exits, as kube-controller-manager does.
func TestLeaseLostReturnsEvenIfWorkHangs(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	client := fake.NewClientset()
	var (
		mu      sync.Mutex
		failing bool
	)
	client.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			return true, nil, errors.New("apiserver unreachable")
		}
		return false, nil, nil
	})
	cfg := leaseConfig{enabled: true, namespace: "kube-system", name: "l",
		leaseDuration: 2 * time.Second, renewDeadline: 300 * time.Millisecond, retryPeriod: 50 * time.Millisecond}
	started, hung := make(chan struct{}), make(chan struct{})
	workEnded := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- runWithLease(context.Background(), nil, client, cfg, nil, func(context.Context) {
			defer close(workEnded)
			close(started)
			<-hung // ignores its context
		})
	}()
	<-started
	mu.Lock()
	failing = true
	lostFrom := time.Now()
	mu.Unlock()
	bound := cfg.renewDeadline + lostLeaseGrace + 3*time.Second
	returned := false
	select {
	case err := <-done:
		returned = true
		require.ErrorIs(t, err, errLeaseLost)
		assert.Less(t, time.Since(lostFrom), bound)
	case <-time.After(bound):
		t.Errorf("runWithLease still waiting for hung work %s after the renewals began to fail", bound)
	}
	close(hung)
	<-workEnded
	if !returned {
		select {
		case err := <-done:
			t.Logf("runWithLease returned %v once the work ended", err)
		case <-time.After(10 * time.Second):
			t.Fatal("runWithLease did not return once the work ended")
		}
	}
}
