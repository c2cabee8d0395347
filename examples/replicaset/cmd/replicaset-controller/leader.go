package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// leaseConfig is the --leader-elect-* flag group.
type leaseConfig struct {
	enabled       bool
	namespace     string
	name          string
	leaseDuration time.Duration
	renewDeadline time.Duration
	retryPeriod   time.Duration
}

var errLeaseLost = errors.New("leader election lost")

// runWithLease runs work only while this process holds the Lease, and
// orders shutdown so that the lease is released after work has drained,
// never before: a successor must not start while we still write.
//
// work runs on the caller's goroutine, not inside the elector's callback, so
// that it is always waited for. The returned error is errLeaseLost when the
// lease was lost while ctx was still live; the process must then exit, as
// another replica may already be leading.
func runWithLease(ctx context.Context, client kubernetes.Interface, cfg leaseConfig, watchdog *leaderelection.HealthzAdaptor, work func(context.Context)) error {
	id, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("leader election identity: %w", err)
	}
	id += "_" + string(uuid.NewUUID())
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.namespace, Name: cfg.name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	leading := make(chan context.Context, 1)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   cfg.leaseDuration,
		RenewDeadline:   cfg.renewDeadline,
		RetryPeriod:     cfg.retryPeriod,
		ReleaseOnCancel: true,
		Name:            cfg.name,
		WatchDog:        watchdog,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) { leading <- lctx },
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	if watchdog != nil {
		watchdog.SetLeaderElection(elector)
	}
	// The elector gets its own context: cancelling it releases the lease,
	// which must wait until work has returned.
	electorCtx, stopElector := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElector()
	electorDone := make(chan struct{})
	go func() {
		defer close(electorDone)
		elector.Run(electorCtx)
	}()

	select {
	case <-ctx.Done():
		stopElector()
		<-electorDone
		return nil
	case lctx := <-leading:
		workCtx, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(lctx, cancel)
		work(workCtx)
		stop()
		cancel()
		lost := lctx.Err() != nil && ctx.Err() == nil
		stopElector()
		<-electorDone
		if lost {
			return errLeaseLost
		}
		return nil
	}
}
