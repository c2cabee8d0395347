package simkit_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/simkit"
)

// A manager over the kit runs a controller built with controller-runtime's
// builder on the kit's cache: with the Worker watch held, every update of
// the WorkerSet is a reconcile on a cache that shows none of the Workers
// already made, and the naive reconciler makes replicas more each time.
func TestManagerRunsControllersOnTheKit(t *testing.T) {
	kit := newKit(t)
	mgr, err := kit.NewManager(manager.Options{})
	require.NoError(t, err)
	var reconciles atomic.Int32
	naive := naiveReconciler(mgr.GetClient(), mgr.GetScheme())
	counted := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		defer reconciles.Add(1)
		return naive(ctx, req)
	})
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&WorkerSet{}).Owns(&Worker{}).Complete(counted))
	ctx := simkit.StartManagerTest(t, mgr)

	release := kit.HoldWatches(&Worker{})
	set := &WorkerSet{ObjectMeta: metav1.ObjectMeta{Namespace: trainKey.Namespace, Name: trainKey.Name},
		Spec: WorkerSetSpec{Replicas: replicas}}
	require.NoError(t, mgr.GetClient().Create(ctx, set))
	for pass := int32(1); pass <= passes; pass++ {
		require.Eventually(t, func() bool { return reconciles.Load() >= pass }, 30*time.Second, 5*time.Millisecond,
			"reconcile %d never ran", pass)
		if pass == passes {
			break
		}
		// Wait until the cache has the WorkerSet as written, so the update
		// below does not conflict, then touch it: one more event.
		require.Eventually(t, func() bool {
			var cached WorkerSet
			return mgr.GetClient().Get(ctx, trainKey, &cached) == nil && cached.ResourceVersion == set.ResourceVersion
		}, 30*time.Second, 5*time.Millisecond)
		set.Annotations = map[string]string{"touched": strconv.Itoa(int(pass))}
		require.NoError(t, mgr.GetClient().Update(ctx, set))
	}
	var workers WorkerList
	require.NoError(t, kit.APIReader().List(ctx, &workers))
	t.Logf("manager, naive reconciler: %d Workers for replicas %d after %d reconciles on a lagging cache",
		len(workers.Items), replicas, reconciles.Load())
	assert.Greater(t, len(workers.Items), replicas)
	release()
	// The Worker events that now arrive trigger more reconciles, on a cache
	// that shows some of the Workers so far, so the naive reconciler may
	// make more yet: wait for the cache to show what the cluster has.
	require.Eventually(t, func() bool {
		var cached, live WorkerList
		return mgr.GetClient().List(ctx, &cached) == nil && kit.APIReader().List(ctx, &live) == nil &&
			len(cached.Items) == len(live.Items) && len(live.Items) >= len(workers.Items)
	}, 30*time.Second, 5*time.Millisecond, "the cache catches up after the release")
}

// The manager's API reader is the kit's: it reads what the cluster holds,
// where controller-runtime's own would dial the REST config's dead address.
func TestManagerAPIReaderReadsTheCluster(t *testing.T) {
	kit := newKit(t)
	mgr, err := kit.NewManager(manager.Options{})
	require.NoError(t, err)
	set := &WorkerSet{ObjectMeta: metav1.ObjectMeta{Namespace: trainKey.Namespace, Name: trainKey.Name}}
	require.NoError(t, kit.APIReader().Create(context.Background(), set))
	var read WorkerSet
	require.NoError(t, mgr.GetAPIReader().Get(context.Background(), trainKey, &read))
	assert.Equal(t, set.UID, read.UID)
}

// recordingTB is a testing.TB whose Log and Cleanup the test sees.
type recordingTB struct {
	testing.TB
	logged   []string
	cleanups []func()
}

func (r *recordingTB) Log(args ...any)  { r.logged = append(r.logged, fmt.Sprint(args...)) }
func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

// TestLogger writes errors to the test's log until its cleanup has run, and
// drops what comes after.
func TestTestLogger(t *testing.T) {
	tb := &recordingTB{TB: t}
	logger := simkit.TestLogger(tb)
	logger.Error(errors.New("boom"), "Reconciler error", "controller", "c")
	require.Len(t, tb.logged, 1)
	assert.Contains(t, tb.logged[0], `"msg"="Reconciler error" "error"="boom"`)
	for _, f := range tb.cleanups {
		f()
	}
	logger.Info("late")
	assert.Len(t, tb.logged, 1, "nothing is logged after the cleanup")
}

// A manager's recorders store their events in the simulated cluster, where
// a test lists them; a repeated event is counted on the one Event, as
// against an API server. The broadcaster stops with the manager (goleak in
// TestMain).
func TestManagerRecordsEventsInTheCluster(t *testing.T) {
	kit := newKit(t)
	mgr, err := kit.NewManager(manager.Options{})
	require.NoError(t, err)
	recorder := mgr.GetEventRecorderFor("train-controller")
	ctx := simkit.StartManagerTest(t, mgr)

	set := &WorkerSet{ObjectMeta: metav1.ObjectMeta{Namespace: trainKey.Namespace, Name: trainKey.Name, UID: "uid-train"}}
	recorder.Event(set, corev1.EventTypeWarning, "Refused", "no workers today")
	recorder.Event(set, corev1.EventTypeWarning, "Refused", "no workers today")
	events := kit.Cluster().Client().CoreV1().Events(trainKey.Namespace)
	require.Eventually(t, func() bool {
		list, err := events.List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 1 && list.Items[0].Count == 2
	}, 10*time.Second, 5*time.Millisecond, "the event, recorded twice, in the cluster")
	list, err := events.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	got := list.Items[0]
	assert.Equal(t, "train-controller", got.Source.Component)
	assert.Equal(t, "Refused", got.Reason)
	assert.Equal(t, trainKey.Name, got.InvolvedObject.Name)
}

// A test builds its controllers again, under the same names, in one
// process (-count, or two managers of one test): NewManager does not check
// controller names unless asked to.
func TestManagerAllowsAControllerNameTwice(t *testing.T) {
	kit := newKit(t)
	for range 2 {
		mgr, err := kit.NewManager(manager.Options{})
		require.NoError(t, err)
		require.NoError(t, builder.ControllerManagedBy(mgr).Named("twice").For(&WorkerSet{}).
			Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })))
	}
}
