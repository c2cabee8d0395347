package process

import (
	"context"
	"errors"
	"flag"
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

// LeaderElection configures RunWithLease; AddFlags binds it to the
// --leader-elect-* flags kube-controller-manager uses.
type LeaderElection struct {
	Enabled         bool
	Namespace, Name string
	// LeaseDuration is how long a standby waits before it takes over a
	// Lease that was not renewed, RenewDeadline how long the leader keeps
	// trying to renew, RetryPeriod the wait between attempts.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// AddFlags binds l to fs, with the Lease named name in PodNamespace() by
// default.
func (l *LeaderElection) AddFlags(fs *flag.FlagSet, name string) {
	fs.BoolVar(&l.Enabled, "leader-elect", false, "run only while holding a coordination.k8s.io Lease")
	fs.StringVar(&l.Namespace, "leader-elect-resource-namespace", PodNamespace(), "namespace of the Lease")
	fs.StringVar(&l.Name, "leader-elect-resource-name", name, "name of the Lease")
	fs.DurationVar(&l.LeaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long a standby waits before taking over a lease that was not renewed")
	fs.DurationVar(&l.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader keeps trying to renew before giving up")
	fs.DurationVar(&l.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "wait between lease acquisition or renewal attempts")
}

// Validate reports an enabled election without a Lease to hold. The
// durations are client-go's to check, when RunWithLease starts.
func (l LeaderElection) Validate() error {
	if l.Enabled && (l.Name == "" || l.Namespace == "") {
		return errors.New("--leader-elect needs a lease name and namespace")
	}
	return nil
}

// Access is what leader election needs when enabled: get and update its
// Lease, by name, and create it, which no name can restrict.
func (l LeaderElection) Access() []Access {
	if !l.Enabled {
		return nil
	}
	lease := Access{Group: "coordination.k8s.io", Resource: "leases", Namespace: l.Namespace}
	named := lease
	named.Name = l.Name
	return append(Accesses(named, "get", "update"), Accesses(lease, "create")...)
}

// PodNamespace is the pod's own namespace when its manifest passes it in
// POD_NAMESPACE through the downward API, else kube-system.
func PodNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "kube-system"
}

// PodName is the pod's name when its manifest passes it in POD_NAME through
// the downward API, else the host name (a pod's name too).
func PodName() string {
	if name := os.Getenv("POD_NAME"); name != "" {
		return name
	}
	name, _ := os.Hostname()
	return name
}

// ErrLeaseLost is RunWithLease's error after the Lease was lost: another
// replica may lead already, and the process should exit.
var ErrLeaseLost = errors.New("leader election lost")

// lostLeaseGrace is how long RunWithLease waits, after the Lease was lost,
// for work to stop before it returns ErrLeaseLost anyway.
const lostLeaseGrace = 2 * time.Second

// releaseTimeout bounds the release of the Lease after a clean stop.
const releaseTimeout = 5 * time.Second

// RunWithLease runs work only while this process holds the Lease cfg names,
// and returns once work returned or was never started: when drain is closed
// or ctx is done while standing by, or after work returned.
//
// work runs on a goroutine of its own, not in the elector's callback, so it
// is waited for on a clean stop. Its context is cancelled when ctx is done
// or the Lease is lost; a drain is work's own to watch. After a lost Lease
// another replica may lead about one lease duration later, so RunWithLease
// waits a short grace at most for work and returns ErrLeaseLost without
// touching the Lease, even if work ignores its context: the process must
// exit, as kube-controller-manager does, and exiting ends what hangs.
//
// After a clean stop the Lease is released (no holder, a one-second
// duration) only once work returned, so a successor takes over at once but
// never while this one still writes. client-go's ReleaseOnCancel is not
// used: it also releases after a lost Lease. watchdog, when not nil, is
// wired to the elector for HealthHandler.
func RunWithLease(ctx context.Context, drain <-chan struct{}, client kubernetes.Interface, cfg LeaderElection, watchdog *leaderelection.HealthzAdaptor, work func(context.Context)) error {
	if ctx == nil || client == nil || work == nil {
		panic("process: RunWithLease: nil context, client or work")
	}
	id, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("leader election identity: %w", err)
	}
	id += "_" + string(uuid.NewUUID())
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.Name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	leading := make(chan context.Context, 1)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, Name: cfg.Name, WatchDog: watchdog,
		LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod,
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
	// The elector outlives ctx until work stopped: it must keep renewing
	// while work drains.
	electorCtx, stopElector := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElector()
	electorDone := make(chan struct{})
	go func() {
		defer close(electorDone)
		elector.Run(electorCtx)
	}()
	stop := func() { stopElector(); <-electorDone }

	var lctx context.Context
	select {
	case <-ctx.Done():
		stop()
		return nil
	case <-drain:
		stop()
		return nil
	case lctx = <-leading:
	}
	workCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(lctx, cancel)()
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
	stop()
	if lost {
		return ErrLeaseLost
	}
	return releaseLease(context.WithoutCancel(ctx), lock, id)
}

// abandonWork waits lostLeaseGrace at most for work to stop after the Lease
// was lost; work left running ends with the process.
func abandonWork(ctx context.Context, workDone <-chan struct{}) {
	t := time.NewTimer(lostLeaseGrace)
	defer t.Stop()
	select {
	case <-workDone:
	case <-t.C:
		klog.FromContext(ctx).Info("Work did not stop after the lease was lost; exiting without it", "grace", lostLeaseGrace)
	}
}

// releaseLease gives up a Lease this process still holds. The update
// carries the resource version just read, so it fails rather than clobber a
// Lease someone else took meanwhile.
func releaseLease(ctx context.Context, lock *resourcelock.LeaseLock, id string) error {
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
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
		LeaseDurationSeconds: 1, RenewTime: now, AcquireTime: now, LeaderTransitions: rec.LeaderTransitions,
	}
	if err := lock.Update(ctx, released); err != nil {
		return fmt.Errorf("releasing the lease: %w", err)
	}
	return nil
}
