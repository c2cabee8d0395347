package syncloop

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Loop is a controller's workers over its work queue. Set the fields, then
// call Run once; Drain may be called at any time. Its invariants:
//
//   - a key is reconciled by one worker at a time (the queue's guarantee);
//   - a key whose reconcile succeeded has its failure backoff forgotten and
//     comes back only when asked (the returned delay) or when an event
//     queues it;
//   - a key whose reconcile failed comes back by why it failed: a stale
//     cache (IsStaleCache) after StaleCachePoll, outside the
//     rate limiter; an unreachable API server (ServerUnreachable) after the
//     limiter's delay capped at UnreachableBackoffCap; anything else after
//     the limiter's delay, as upstream.
type Loop struct {
	// Queue holds "namespace/name" keys. Run shuts it down.
	Queue Queue
	// Limiter is Queue's rate limiter, read for the capped delay of
	// unreachable-server failures; nil retries them like any failure.
	Limiter Limiter
	// IsStaleCache reports whether an error only says that the informer
	// caches are behind the controller's own writes; nil: no error does.
	IsStaleCache func(error) bool
	// Reconcile syncs one key and says when to look at it again (0: only
	// on the next event).
	Reconcile func(ctx context.Context, key string) (requeueAfter time.Duration, err error)
	// Workers is how many keys are reconciled at once; below 1 means 1.
	Workers int
	// HasSynced are the informers Run waits for before the first reconcile.
	HasSynced []cache.InformerSynced
	// StaleCachePoll is the retry delay of a key held by the
	// read-your-writes guard; 0 means one second.
	StaleCachePoll time.Duration
	// UnreachableBackoffCap caps the retry delay after the API server could
	// not be reached; 0 means no cap.
	UnreachableBackoffCap time.Duration
	// DrainTimeout bounds a graceful stop; 0 cancels in-flight reconciles as
	// soon as the drain begins.
	DrainTimeout time.Duration
	// Observe, when set, is told of every reconcile: how long it took and
	// its error. Workers call it concurrently.
	Observe func(key string, took time.Duration, err error)
	// Clock times reconciles for Observe; nil means the real clock.
	Clock clock.PassiveClock
	// Name names the loop in its logs.
	Name string

	started   atomic.Bool
	synced    atomic.Bool
	initOnce  sync.Once
	closeOnce sync.Once
	drainCh   chan struct{}
}

// drain is the channel Drain closes, made on first use so that the zero
// Loop needs no constructor.
func (l *Loop) drain() chan struct{} {
	l.initOnce.Do(func() { l.drainCh = make(chan struct{}) })
	return l.drainCh
}

// Drain asks Run to stop gracefully: no new work is accepted, keys already
// queued are still reconciled for at most DrainTimeout, then in-flight
// reconciles are cancelled. It returns at once and may be called more than
// once, or before Run (a Run that has not seen its caches synced then
// returns at once).
func (l *Loop) Drain() {
	ch := l.drain()
	l.closeOnce.Do(func() { close(ch) })
}

// HasSyncedAndRunning reports whether Run has seen the caches synced and
// its workers are running; it turns false once a stop begins.
func (l *Loop) HasSyncedAndRunning() bool { return l.synced.Load() }

// Run waits for the caches, then reconciles keys with Workers workers until
// ctx is done (stop now: in-flight reconciles see their context cancelled
// and queued keys are dropped, what a lost leader lease needs) or Drain is
// called (stop gracefully, see Drain; a cancelled ctx still cuts it short).
// It shuts the queue down and returns nil once every goroutine it started
// has exited. A second call returns an error.
func (l *Loop) Run(ctx context.Context) error {
	if !l.started.CompareAndSwap(false, true) {
		return errors.New("Run called twice")
	}
	defer l.Queue.ShutDown()
	drainCh := l.drain()
	logger := klog.FromContext(ctx)

	waitCtx, cancelWait := context.WithCancel(ctx)
	defer cancelWait()
	go func() {
		select {
		case <-drainCh:
			cancelWait()
		case <-waitCtx.Done():
		}
	}()
	if !cache.WaitForNamedCacheSyncWithContext(waitCtx, l.HasSynced...) {
		// Nobody would hand the queued keys out: there is nothing to drain.
		return nil
	}
	l.synced.Store(true)
	defer l.synced.Store(false)

	// Reconciles run on workCtx: cancelled with ctx, or at the end of a
	// drain.
	workCtx, cancelWork := context.WithCancel(ctx)
	defer cancelWork()
	var wg sync.WaitGroup
	for range max(l.Workers, 1) {
		wg.Go(func() {
			for workCtx.Err() == nil && l.ProcessNext(workCtx) {
			}
		})
	}
	select {
	case <-ctx.Done():
		l.synced.Store(false)
		logger.Info("Stopping at once; queued keys are dropped", "controller", l.Name, "queued", l.Queue.Len())
		cancelWork()
		l.Queue.ShutDown()
	case <-drainCh:
		l.synced.Store(false)
		logger.Info("Draining the work queue", "controller", l.Name, "queued", l.Queue.Len(), "timeout", l.DrainTimeout)
		drainCtx, cancelDrain := context.WithTimeout(ctx, l.DrainTimeout)
		if err := l.Queue.ShutDownWithDrainContext(drainCtx); err != nil {
			logger.Info("Drain cut short; cancelling in-flight reconciles", "controller", l.Name, "reason", err.Error())
		}
		cancelDrain()
		cancelWork()
	}
	wg.Wait()
	return nil
}

// ProcessNext reconciles one key and puts it back by the outcome (see
// Loop). It reports whether a worker should go on: false once the queue is
// shut down. Run's workers loop on it; a caller running its own workers
// may too.
func (l *Loop) ProcessNext(ctx context.Context) bool {
	key, quit := l.Queue.Get()
	if quit {
		return false
	}
	defer l.Queue.Done(key)
	clk := l.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	start := clk.Now()
	after, err := l.Reconcile(ctx, key)
	if l.Observe != nil {
		l.Observe(key, clk.Since(start), err)
	}
	if err == nil {
		l.Queue.Forget(key)
		if after > 0 {
			l.Queue.AddAfter(key, after)
		}
		return true
	}
	switch l.classify(err) {
	case requeueStaleCache:
		klog.FromContext(ctx).V(4).Info("Informer cache behind the controller's writes; polling", "controller", l.Name, "key", key, "reason", err.Error())
		poll := l.StaleCachePoll
		if poll <= 0 {
			poll = time.Second
		}
		l.Queue.AddAfter(key, poll)
	case requeueUnreachable:
		l.logFailure(ctx, key, err)
		if l.Limiter == nil || l.UnreachableBackoffCap <= 0 {
			l.Queue.AddRateLimited(key)
			return true
		}
		l.Queue.AddAfter(key, min(l.Limiter.When(key), l.UnreachableBackoffCap))
	default:
		l.logFailure(ctx, key, err)
		l.Queue.AddRateLimited(key)
	}
	return true
}

func (l *Loop) logFailure(ctx context.Context, key string, err error) {
	if ctx.Err() == nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Sync failed", "controller", l.Name, "key", key)
	}
}
