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
	"k8s.io/klog/v2"
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

// lostLeaseGrace is how long a process that lost its lease waits for its
// work to stop before it gives up on it and returns errLeaseLost anyway.
const lostLeaseGrace = 2 * time.Second

// runWithLease runs work only while this process holds the Lease.
//
// work runs on a goroutine of its own, not inside the elector's callback, so
// that it is waited for on a clean shutdown. Its context is cancelled at once
// when the lease is lost: another replica may lead about one lease duration
// later, and nothing may be written after that. runWithLease then waits at
// most lostLeaseGrace for work to return and returns errLeaseLost without
// touching the lease, even if work is still stuck (a call that ignores its
// context, say): the process must exit, as kube-controller-manager does,
// rather than wait for its workers, and exiting is what ends whatever hangs.
//
// On a clean shutdown (drain closed, or ctx done, while still leading) work
// stops first and the lease is released afterwards, so a successor can take
// over at once but never while we still write. client-go's ReleaseOnCancel is
// not used for this, as it also releases after a lost lease.
func runWithLease(ctx context.Context, drain <-chan struct{}, client kubernetes.Interface, cfg leaseConfig, watchdog *leaderelection.HealthzAdaptor, work func(context.Context)) error {
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
		Lock:          lock,
		LeaseDuration: cfg.leaseDuration,
		RenewDeadline: cfg.renewDeadline,
		RetryPeriod:   cfg.retryPeriod,
		Name:          cfg.name,
		WatchDog:      watchdog,
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
	electorCtx, stopElector := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElector()
	electorDone := make(chan struct{})
	go func() {
		defer close(electorDone)
		elector.Run(electorCtx)
	}()

	select {
	case <-ctx.Done():
	case <-drain:
	case lctx := <-leading:
		// Stops at once with ctx or with the lease; a drain is work's own.
		workCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(lctx, cancel)
		defer stop()
		workDone := make(chan struct{})
		go func() {
			defer close(workDone)
			work(workCtx)
		}()
		select {
		case <-workDone:
		case <-lctx.Done():
			abandonWork(ctx, workDone)
		}
		lost := lctx.Err() != nil
		stopElector()
		<-electorDone
		if lost {
			return errLeaseLost
		}
		return releaseLease(context.WithoutCancel(ctx), lock, id)
	}
	stopElector()
	<-electorDone
	return nil
}

// abandonWork waits for work to stop after the lease was lost, for
// lostLeaseGrace at most; work left running ends with the process.
func abandonWork(ctx context.Context, workDone <-chan struct{}) {
	t := time.NewTimer(lostLeaseGrace)
	defer t.Stop()
	select {
	case <-workDone:
	case <-t.C:
		klog.FromContext(ctx).Info("Work did not stop after the lease was lost; exiting without it", "grace", lostLeaseGrace)
	}
}

// releaseLease gives up a lease this process still holds, the way client-go's
// release does: no holder, a one-second duration. The update carries the
// resource version just read, so it fails rather than clobber a lease that
// someone else took meanwhile.
func releaseLease(ctx context.Context, lock *resourcelock.LeaseLock, id string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rec, _, err := lock.Get(ctx)
	if err != nil {
		return fmt.Errorf("releasing the lease: %w", err)
	}
	if rec.HolderIdentity != id {
		return nil
	}
	now := metav1.NewTime(time.Now())
	released := resourcelock.LeaderElectionRecord{
		LeaseDurationSeconds: 1,
		RenewTime:            now,
		AcquireTime:          now,
		LeaderTransitions:    rec.LeaderTransitions,
	}
	if err := lock.Update(ctx, released); err != nil {
		return fmt.Errorf("releasing the lease: %w", err)
	}
	return nil
}
