package syncloop

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctrlkit/ctrlkit/workqueue"
)

// testLoop is a Loop over a real work queue, kept typed for the tests.
type testLoop struct {
	*Loop
	queue *workqueue.RateLimitingQueue[string]
}

func newLoop(reconcile func(ctx context.Context, key string) (time.Duration, error)) testLoop {
	limiter := workqueue.DefaultControllerRateLimiter[string]()
	q := workqueue.NewRateLimiting(limiter)
	return testLoop{&Loop{Queue: q, Limiter: limiter, Reconcile: reconcile, Workers: 2}, q}
}

func run(t *testing.T, l testLoop, ctx context.Context) (wait func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	require.Eventually(t, l.HasSyncedAndRunning, 5*time.Second, time.Millisecond)
	return func() {
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return")
		}
	}
}

// A successful reconcile that asks to be looked at again is; one that asks
// nothing is not.
func TestRequeueAfterIsHonoured(t *testing.T) {
	var again, once atomic.Int32
	l := newLoop(func(_ context.Context, key string) (time.Duration, error) {
		if key == "ns/again" {
			if again.Add(1) < 3 {
				return time.Millisecond, nil
			}
			return 0, nil
		}
		once.Add(1)
		return 0, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wait := run(t, l, ctx)
	l.queue.Add("ns/again")
	l.queue.Add("ns/once")
	require.Eventually(t, func() bool { return again.Load() == 3 }, 5*time.Second, time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	assert.EqualValues(t, 3, again.Load())
	assert.EqualValues(t, 1, once.Load())
	cancel()
	wait()
	assert.False(t, l.HasSyncedAndRunning())
}

// Drain reconciles what is queued, then returns; ctx cancel stops at once
// and cancels the reconcile in flight.
func TestDrainAndStop(t *testing.T) {
	var synced atomic.Int32
	block := make(chan struct{})
	l := newLoop(func(ctx context.Context, key string) (time.Duration, error) {
		if key == "ns/block" {
			close(block)
			<-ctx.Done()
			return 0, ctx.Err()
		}
		synced.Add(1)
		return 0, nil
	})
	l.DrainTimeout = time.Minute
	for _, k := range []string{"ns/a", "ns/b", "ns/c"} {
		l.queue.Add(k)
	}
	wait := run(t, l, context.Background())
	l.Drain()
	l.Drain() // twice is fine
	wait()
	assert.EqualValues(t, 3, synced.Load(), "queued keys are reconciled by a drain")
	assert.Error(t, l.Run(context.Background()), "a second Run")

	stopped := newLoop(func(ctx context.Context, key string) (time.Duration, error) {
		close(block)
		<-ctx.Done()
		return 0, ctx.Err()
	})
	block = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	wait = run(t, stopped, ctx)
	stopped.queue.Add("ns/block")
	<-block
	cancel()
	wait()
}

// An unreachable server's retries are capped; other failures back off.
func TestUnreachableRetryIsCapped(t *testing.T) {
	l := newLoop(func(context.Context, string) (time.Duration, error) { return 0, context.DeadlineExceeded })
	l.UnreachableBackoffCap = 3 * time.Millisecond
	for range 30 {
		l.queue.Add("ns/a")
		start := time.Now()
		require.True(t, l.ProcessNext(context.Background()))
		at, ok := l.queue.Deadline("ns/a")
		require.True(t, ok)
		assert.LessOrEqual(t, at.Sub(start), 50*time.Millisecond)
		require.Eventually(t, func() bool { return l.queue.Len() == 1 }, time.Second, time.Millisecond)
		key, _ := l.queue.Get()
		l.queue.Done(key)
	}
	other := newLoop(func(context.Context, string) (time.Duration, error) { return 0, errors.New("refused") })
	for range 20 {
		other.queue.Add("ns/a")
		require.True(t, other.ProcessNext(context.Background()))
	}
	assert.Equal(t, 20, other.queue.NumRequeues("ns/a"))
	l.queue.ShutDown()
	other.queue.ShutDown()
}
