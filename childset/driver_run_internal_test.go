package childset

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"

	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// runEnv starts the env's informers and Run with a sync handler replaced by
// sync, and returns a function that waits for Run to return.
func runEnv(t *testing.T, e *loopEnv, ctx context.Context, sync func(ctx context.Context, key string) error) (wait func() error) {
	t.Helper()
	e.syncHandler = func(ctx context.Context, key string) (Result, error) {
		return Result{}, sync(ctx, key)
	}
	infCtx, stopInformers := context.WithCancel(ctx)
	e.inf.Start(infCtx.Done())
	t.Cleanup(func() { stopInformers(); e.inf.Shutdown() })
	done := make(chan error, 1)
	go func() { done <- e.c.Run(ctx) }()
	require.Eventually(t, e.c.HasSynced, 10*time.Second, time.Millisecond)
	return func() error {
		select {
		case err := <-done:
			stopInformers()
			e.inf.Shutdown()
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("Run did not return")
			return nil
		}
	}
}

// keyLog records synced keys.
type keyLog struct {
	mu   sync.Mutex
	keys []string
}

func (l *keyLog) add(k string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keys = append(l.keys, k)
}

func (l *keyLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.keys...)
}

// TestContextCancelStopsAtOnce: cancelling Run's context (a lost lease)
// cancels the sync in flight at once and drops the queued keys, however long
// the drain timeout.
func TestContextCancelStopsAtOnce(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e := newLoopEnv(t, WithWorkers(1), WithDrainTimeout(time.Hour))
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	var log keyLog
	inFlight := make(chan struct{})
	syncCancelled := make(chan struct{})
	wait := runEnv(t, e, ctx, func(ctx context.Context, key string) error {
		log.add(key)
		if key == "default/a" {
			close(inFlight)
			<-ctx.Done()
			close(syncCancelled)
			return ctx.Err()
		}
		return nil
	})
	e.c.queue.Add("default/a")
	<-inFlight
	e.c.queue.Add("default/b")
	e.c.queue.Add("default/c")
	start := time.Now()
	cancel()
	require.NoError(t, wait())
	assert.Less(t, time.Since(start), 5*time.Second, "no drain")
	select {
	case <-syncCancelled:
	default:
		t.Fatal("the sync in flight did not see its context cancelled")
	}
	assert.Equal(t, []string{"default/a"}, log.get(), "queued owners are dropped")
	assert.False(t, e.c.HasSynced())
}

// TestDrainSyncsQueuedOwners: Drain stops gracefully, syncing what is queued.
func TestDrainSyncsQueuedOwners(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e := newLoopEnv(t, WithWorkers(1))
	var log keyLog
	release := make(chan struct{})
	wait := runEnv(t, e, e.ctx, func(ctx context.Context, key string) error {
		if key == "default/a" {
			<-release
		}
		log.add(key)
		return ctx.Err()
	})
	e.c.queue.Add("default/a")
	require.Eventually(t, func() bool { return e.c.queue.NumProcessing() == 1 }, 5*time.Second, time.Millisecond)
	e.c.queue.Add("default/b")
	e.c.queue.Add("default/c")
	e.c.Drain()
	e.c.Drain() // idempotent
	close(release)
	require.NoError(t, wait())
	assert.Equal(t, []string{"default/a", "default/b", "default/c"}, log.get())
}

// TestDrainCutShortByContext: a cancelled context during a drain stops at
// once (the binary's second signal).
func TestDrainCutShortByContext(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e := newLoopEnv(t, WithWorkers(1), WithDrainTimeout(time.Hour))
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	inFlight := make(chan struct{})
	wait := runEnv(t, e, ctx, func(ctx context.Context, key string) error {
		close(inFlight)
		<-ctx.Done()
		return ctx.Err()
	})
	e.c.queue.Add("default/a")
	<-inFlight
	e.c.Drain()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	cancel()
	require.NoError(t, wait())
	assert.Less(t, time.Since(start), 5*time.Second)
}

// TestDrainBeforeCachesSync returns at once without syncing anything.
func TestDrainBeforeCachesSync(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e := newLoopEnv(t)
	e.c.queue.Add("default/x")
	e.c.Drain()
	require.NoError(t, e.c.Run(e.ctx)) // informers never started
	require.Error(t, e.c.Run(e.ctx), "Run twice")
}

// loopEnv is a Controller on informers that are never started, but by
// runEnv, whose reconcile a test replaces through syncHandler.
type loopEnv struct {
	ctx         context.Context
	inf         informers.SharedInformerFactory
	c           *Controller[*appsv1.ReplicaSet, *v1.ConfigMap]
	syncHandler func(ctx context.Context, key string) (Result, error)
}

func newLoopEnv(t *testing.T, opts ...Option) *loopEnv {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	owners, children := f.Apps().V1().ReplicaSets().Informer(), f.Core().V1().ConfigMaps().Informer()
	c, err := New[*appsv1.ReplicaSet, *v1.ConfigMap](owners, children, webSpec{}, readyKind{IndexerLister[*v1.ConfigMap](children.GetIndexer())},
		&objectcontrol.Fake[*v1.ConfigMap]{}, opts...)
	require.NoError(t, err)
	e := &loopEnv{ctx: ctx, inf: f, c: c, syncHandler: c.Reconcile}
	c.loop.Reconcile = func(ctx context.Context, key string) (time.Duration, error) {
		res, err := e.syncHandler(ctx, key)
		return res.RequeueAfter, err
	}
	return e
}
