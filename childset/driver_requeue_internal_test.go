package childset

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/ctrlkit/ctrlkit/consistency"
)

// heldUntil drives one owner through the controller's queue on a fake clock.
// The owner's sync fails with failure until the clock reaches clearsAt, then
// succeeds; it returns how long after clearsAt the first successful sync
// came. Between syncs the clock jumps straight to the queue's next deadline.
func heldUntil(t *testing.T, clearsAt time.Duration, failure error, opts ...Option) time.Duration {
	t.Helper()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(start)
	e := newLoopEnv(t, append([]Option{WithClock(clk)}, opts...)...)
	const key = "ns/held"
	var succeededAt time.Time
	e.syncHandler = func(context.Context, string) (Result, error) {
		if clk.Since(start) < clearsAt {
			return Result{}, failure
		}
		succeededAt = clk.Now()
		return Result{}, nil
	}
	e.c.queue.Add(key)
	for i := 0; succeededAt.IsZero(); i++ {
		require.Less(t, i, 100000, "the owner never synced successfully")
		if e.c.queue.Len() == 0 {
			at, ok := e.c.queue.Deadline(key)
			require.True(t, ok, "the owner is neither queued nor waiting at %v: it was lost", clk.Since(start))
			clk.SetTime(at)
			require.Eventually(t, func() bool { return e.c.queue.Len() > 0 }, 5*time.Second, time.Millisecond,
				"the owner's deadline passed but it was not queued")
		}
		require.True(t, e.c.ProcessNextWorkItem(e.ctx))
	}
	e.c.queue.ShutDown()
	return succeededAt.Sub(start) - clearsAt
}

func staleErr() error {
	return &consistency.StaleCacheError{OwnerKey: "ns/held", GroupResource: schema.GroupResource{Resource: "pods"}, WroteRV: "200", ReadRV: "100"}
}

// refusedErr is what client-go returns while nothing listens on the API
// server's port.
func refusedErr() error {
	return fmt.Errorf("updating status: %w", &url.Error{Op: "Put", URL: "https://127.0.0.1:6443/apis", Err: &net.OpError{
		Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED},
	}})
}

// An owner held by the read-your-writes guard resumes within one poll of its
// informer catching up, however long the hold. With every stale retry fed
// into the failure backoff, a hold that cleared at 60 s first synced at
// 81.9 s, and one that cleared at 200 s at 327.7 s.
func TestStaleCacheHoldResumesWithinOnePoll(t *testing.T) {
	for _, clears := range []time.Duration{60 * time.Second, 200 * time.Second} {
		late := heldUntil(t, clears, staleErr())
		assert.LessOrEqual(t, late, DefaultStaleCachePoll, "hold cleared at %v", clears)
	}
	late := heldUntil(t, 95*time.Second, staleErr(), WithStaleCachePoll(10*time.Second))
	assert.LessOrEqual(t, late, 10*time.Second, "with a 10 s poll")
	assert.Equal(t, 5*time.Second, late, "polled every 10 s, so the 100 s poll is the first after 95 s")
}

// A stale hold is not a failure: it leaves the failure streak as it was.
func TestStaleCacheHoldDoesNotFeedBackoff(t *testing.T) {
	e := newLoopEnv(t)
	const key = "ns/held"
	e.syncHandler = func(context.Context, string) (Result, error) { return Result{}, staleErr() }
	for range 20 {
		e.c.queue.Add(key)
		require.True(t, e.c.ProcessNextWorkItem(e.ctx))
	}
	assert.Zero(t, e.c.queue.NumRequeues(key))
	e.c.queue.ShutDown()
}

// After an outage of the API server, an owner whose syncs failed because it
// could not be reached retries within the cap of the server answering again.
// With the failure backoff uncapped, an owner failing through a 330 s outage
// first retried 10 min 55 s after it began.
func TestUnreachableServerResumesWithinCap(t *testing.T) {
	for _, err := range []error{
		refusedErr(),
		utilerrors.NewAggregate([]error{errors.New("pod foo: conflict"), refusedErr()}),
		apierrors.NewServiceUnavailable("starting"),
		apierrors.NewTooManyRequests("slow down", 1),
		fmt.Errorf("creating pod: %w", context.DeadlineExceeded),
	} {
		late := heldUntil(t, 330*time.Second, err)
		assert.LessOrEqual(t, late, DefaultUnreachableBackoffCap, "error %v", err)
	}
	late := heldUntil(t, 330*time.Second, refusedErr(), WithUnreachableBackoffCap(5*time.Second))
	assert.LessOrEqual(t, late, 5*time.Second)
}

// Any other failure keeps upstream's exponential backoff, past the cap.
func TestOtherFailuresBackOffAsUpstream(t *testing.T) {
	late := heldUntil(t, 330*time.Second, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New("denied")))
	assert.Greater(t, late, DefaultUnreachableBackoffCap, "a refusal is the owner's failure, not the server's absence")
}

// Stale-cache holds must not draw on the queue's shared token bucket. During
// a fast scale-up every sync after a batch of creates can find the pod cache
// a few writes behind; when each of those retries took a token (10 per
// second, burst 100), a few thousand of them put the bucket minutes into
// debt, and the next retry of any owner, for any reason, waited that long.
func TestStaleCacheHoldsDoNotDrainTheTokenBucket(t *testing.T) {
	e := newLoopEnv(t)
	stale := true
	e.syncHandler = func(context.Context, string) (Result, error) {
		if stale {
			return Result{}, staleErr()
		}
		return Result{}, errors.New("a real failure")
	}
	for i := range 3000 {
		key := fmt.Sprintf("ns/owner-%d", i%50)
		e.c.queue.Add(key)
		require.True(t, e.c.ProcessNextWorkItem(e.ctx))
	}
	stale = false
	e.c.queue.Add("ns/failing")
	before := time.Now()
	require.True(t, e.c.ProcessNextWorkItem(e.ctx))
	if at, waiting := e.c.queue.Deadline("ns/failing"); waiting {
		assert.Less(t, at.Sub(before), time.Second, "a first failure retries after the base backoff, not after the bucket's debt")
	} else {
		// On a loaded machine the base backoff (5 ms) may be over already:
		// the owner is then back in the queue, well within the second.
		assert.Equal(t, 1, e.c.queue.Len(), "the failed owner is retried")
		assert.Less(t, time.Since(before), time.Second)
	}
	e.c.queue.ShutDown()
}
