package ctrlruntime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cgworkqueue "k8s.io/client-go/util/workqueue"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
	"github.com/ctrlkit/ctrlkit/workqueue"
)

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: "1"}}
}

// reconcileOrder runs an unmanaged controller-runtime controller on the
// queue newQueue builds. While the first request ("gate") is being
// reconciled, it delivers through controller-runtime's own
// EnqueueRequestForObject handler two create events from the initial list
// (low priority) and then one live create event; it returns the order in
// which the controller reconciled them.
func reconcileOrder(t *testing.T, name string, newQueue func(string, cgworkqueue.TypedRateLimiter[reconcile.Request]) cgworkqueue.TypedRateLimitingInterface[reconcile.Request]) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	gateHeld := make(chan struct{})
	releaseGate := make(chan struct{})
	var mu sync.Mutex
	var order []string
	allDone := make(chan struct{})
	r := reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		if req.Name == "gate" {
			close(gateHeld)
			<-releaseGate
			return reconcile.Result{}, nil
		}
		mu.Lock()
		defer mu.Unlock()
		order = append(order, req.Name)
		if len(order) == 3 {
			close(allDone)
		}
		return reconcile.Result{}, nil
	})
	c, err := controller.NewUnmanaged(name, controller.Options{
		Reconciler:         r,
		NewQueue:           newQueue,
		SkipNameValidation: ptr.To(true),
	})
	require.NoError(t, err)

	var h handler.EventHandler = &handler.EnqueueRequestForObject{}
	require.NoError(t, c.Watch(source.Func(func(ctx context.Context, q cgworkqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		go func() {
			h.Generic(ctx, event.GenericEvent{Object: configMap("gate")}, q)
			select {
			case <-gateHeld:
			case <-ctx.Done():
				return
			}
			h.Create(ctx, event.CreateEvent{Object: configMap("listed-1"), IsInInitialList: true}, q)
			h.Create(ctx, event.CreateEvent{Object: configMap("listed-2"), IsInInitialList: true}, q)
			h.Create(ctx, event.CreateEvent{Object: configMap("changed")}, q)
			close(releaseGate)
		}()
		return nil
	})))

	started := make(chan error, 1)
	go func() { started <- c.Start(ctx) }()
	select {
	case <-allDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the controller did not reconcile the three requests in time")
	}
	cancel()
	require.NoError(t, <-started)
	mu.Lock()
	defer mu.Unlock()
	return order
}

func TestHandlerPrioritiesSurviveInController(t *testing.T) {
	got := reconcileOrder(t, "priorities-kept", ctrlruntime.NewQueue)
	assert.Equal(t, []string{"changed", "listed-1", "listed-2"}, got,
		"the live change must be reconciled before the initial-list objects")
}

// The control: ctrlkit's plain rate-limiting queue, which has no AddWithOpts,
// is wrapped by controller-runtime and the handler's priorities are lost.
func TestPlainQueueLosesPrioritiesInController(t *testing.T) {
	plain := func(name string, rl cgworkqueue.TypedRateLimiter[reconcile.Request]) cgworkqueue.TypedRateLimitingInterface[reconcile.Request] {
		return workqueue.NewRateLimiting[reconcile.Request](rl, workqueue.WithName(name))
	}
	got := reconcileOrder(t, "priorities-lost", plain)
	assert.Equal(t, []string{"listed-1", "listed-2", "changed"}, got)
}

func TestAddWithOpts(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1_700_000_000, 0))
	limiter := workqueue.NewItemExponentialFailureRateLimiter[string](time.Second, time.Minute)
	q := ctrlruntime.NewTypedQueue[string]("add-with-opts", limiter, workqueue.WithClock(clk))
	defer q.ShutDown()

	// RateLimited and After together: the shorter delay wins.
	q.AddWithOpts(priorityqueue.AddOpts{After: time.Hour, RateLimited: true}, "a")
	at, ok := q.Deadline("a")
	require.True(t, ok)
	assert.Equal(t, clk.Now().Add(time.Second), at)
	assert.Equal(t, 1, q.NumRequeues("a"))

	// After alone, shorter than the limiter's next delay (2s).
	q.AddWithOpts(priorityqueue.AddOpts{After: 500 * time.Millisecond, RateLimited: true}, "b")
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, "b")
	at, ok = q.Deadline("b")
	require.True(t, ok)
	assert.Equal(t, clk.Now().Add(500*time.Millisecond), at, "the earlier deadline is kept")

	// Several items at once, at a priority, ready now.
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(5)}, "c", "d")
	assert.Equal(t, 2, q.Len())
	assert.Equal(t, 2, q.NumWaiting())
	for _, want := range []string{"c", "d"} {
		item, prio, shutdown := q.GetWithPriority()
		require.False(t, shutdown)
		assert.Equal(t, want, item)
		assert.Equal(t, 5, prio)
		q.Done(item)
	}

	// Delayed items come out when due, at the priority they were given.
	q.AddWithOpts(priorityqueue.AddOpts{After: time.Second, Priority: ptr.To(-3)}, "e")
	clk.Step(2 * time.Second)
	got := map[string]int{}
	for range 3 {
		item, prio, shutdown := q.GetWithPriority()
		require.False(t, shutdown)
		got[item] = prio
		q.Done(item)
	}
	assert.Equal(t, map[string]int{"a": 0, "b": 0, "e": -3}, got)

	q.Forget("a")
	assert.Equal(t, 0, q.NumRequeues("a"))
}

func TestNilRateLimiterUsesControllerRuntimeDefault(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1_700_000_000, 0))
	q := ctrlruntime.NewTypedQueue[string]("nil-limiter", nil, workqueue.WithClock(clk))
	defer q.ShutDown()
	q.AddRateLimited("x")
	q.AddRateLimited("y")
	q.AddRateLimited("y")
	at, ok := q.Deadline("x")
	require.True(t, ok)
	assert.Equal(t, clk.Now().Add(5*time.Millisecond), at)
	assert.Equal(t, 2, q.NumRequeues("y"))
}

func TestAddWithOptsAfterShutdownIsIgnored(t *testing.T) {
	q := ctrlruntime.NewTypedQueue[string]("after-shutdown", nil)
	q.ShutDown()
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(1)}, "a")
	q.AddWithOpts(priorityqueue.AddOpts{After: time.Second}, "b")
	assert.Equal(t, 0, q.Len())
	_, _, shutdown := q.GetWithPriority()
	assert.True(t, shutdown)
}
