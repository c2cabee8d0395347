package simcluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
)

// watchDefaultPods returns a cluster without nodes, its pod client for
// "default" and a watch on those pods.
func watchDefaultPods(t *testing.T) (*Cluster, typedcorev1.PodInterface, watch.Interface) {
	t.Helper()
	c := New(WithNodes(0))
	pods := c.Client().CoreV1().Pods("default")
	w, err := pods.Watch(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	return c, pods, w
}

// readEvents reads n events from w, failing the test after a generous wait.
func readEvents(t *testing.T, w watch.Interface, n int) []watch.Event {
	t.Helper()
	events := make([]watch.Event, 0, n)
	timeout := time.After(30 * time.Second)
	for len(events) < n {
		select {
		case e, ok := <-w.ResultChan():
			require.True(t, ok, "watch closed after %d of %d events", len(events), n)
			events = append(events, e)
		case <-timeout:
			t.Fatalf("got %d of %d events", len(events), n)
		}
	}
	return events
}

// A 1,000-pod create and a delete of 150 with a watch that nobody reads
// meanwhile: client-go's fake watcher panics at the 101st unread event; here
// every event arrives, in order, once the reader comes back.
func TestWatchBacklogNeverPanicsOrDrops(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	c := New()
	pods := c.Client().CoreV1().Pods("default")
	w, err := pods.Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)

	names := make([]string, 1000)
	for i := range names {
		p, err := pods.Create(ctx, pendingPod("p-"), metav1.CreateOptions{})
		require.NoError(t, err)
		names[i] = p.Name
	}
	for _, name := range names[:150] {
		require.NoError(t, pods.Delete(ctx, name, metav1.DeleteOptions{}))
	}

	events := readEvents(t, w, 1150)
	for i, e := range events {
		want, name := watch.Added, names[i%1000]
		if i >= 1000 {
			want, name = watch.Deleted, names[i-1000]
		}
		require.Equal(t, want, e.Type, "event %d", i)
		require.Equal(t, name, e.Object.(*v1.Pod).Name, "event %d", i)
	}
	w.Stop()
	w.Stop() // idempotent
	_, open := <-w.ResultChan()
	assert.False(t, open, "Stop closes the result channel")
	assert.Zero(t, c.tracker.openWatches())
}

// An informer on a ReplicaSet-sized scale-down, 150 -> 0, sees every pod go,
// even when its handler is slow enough for the backlog to build up.
func TestInformerFollowsScaleDown(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := New()
	pods := c.Client().CoreV1().Pods("default")
	for i := range 150 {
		p := pendingPod("")
		p.Name = fmt.Sprintf("p-%03d", i)
		require.NoError(t, c.Add(p), "seeded before the informer starts, so its watch replays them")
	}
	factory := informers.NewSharedInformerFactory(c.Client(), 0)
	inf := factory.Core().V1().Pods().Informer()
	gate := make(chan struct{})
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(any) { <-gate }})
	require.NoError(t, err)
	factory.Start(ctx.Done())
	require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))
	for i := range 150 {
		require.NoError(t, pods.Delete(ctx, fmt.Sprintf("p-%03d", i), metav1.DeleteOptions{}))
	}
	close(gate)
	require.Eventually(t, func() bool { return len(inf.GetStore().List()) == 0 }, 30*time.Second, 10*time.Millisecond)
	cancel()
	factory.Shutdown()
}

// A watch resumes after a list's resourceVersion: what happened in between
// is replayed, nothing before it.
func TestWatchResumesFromResourceVersion(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	c := New(WithNodes(0))
	pods := c.Client().CoreV1().Pods("default")
	_, err := pods.Create(ctx, pendingPod("before-"), metav1.CreateOptions{})
	require.NoError(t, err)
	list, err := pods.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, list.ResourceVersion)
	after, err := pods.Create(ctx, pendingPod("after-"), metav1.CreateOptions{})
	require.NoError(t, err)

	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	require.NoError(t, err)
	e := readEvents(t, w, 1)[0]
	assert.Equal(t, after.Name, e.Object.(*v1.Pod).Name)
	w.Stop()

	// No resourceVersion: every existing pod, as the apiserver does.
	w, err = pods.Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, readEvents(t, w, 2), 2)
	w.Stop()

	_, err = pods.Watch(ctx, metav1.ListOptions{ResourceVersion: "x"})
	assert.True(t, apierrors.IsBadRequest(err), "%v", err)
}

// Past the kept history a watch gets 410 Gone, which makes informers relist.
func TestWatchTooOld(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	c := New(WithNodes(0))
	pods := c.Client().CoreV1().Pods("default")
	p, err := pods.Create(ctx, pendingPod("p-"), metav1.CreateOptions{})
	require.NoError(t, err)
	for range 2*eventHistory + 1 {
		p.Labels = map[string]string{"n": p.ResourceVersion}
		p, err = pods.Update(ctx, p, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	_, err = pods.Watch(ctx, metav1.ListOptions{ResourceVersion: "1"})
	assert.True(t, apierrors.IsResourceExpired(err) || apierrors.IsGone(err), "%v", err)
}

// Writes made straight to the fake clientset's own tracker, as tests do to
// set the scene without recording actions, reach watches too, and join the
// cluster's resourceVersion sequence so later client writes don't conflict.
// Each raw write here waits for its event before the next, as Client's doc
// asks.
func TestWatchSeesPlainTrackerWrites(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	c, pods, w := watchDefaultPods(t)
	gvr := v1.SchemeGroupVersion.WithResource("pods")
	p := pendingPod("")
	p.Name = "raw"
	p.Namespace = "default"
	require.NoError(t, c.Client().Tracker().Add(p))
	added := readEvents(t, w, 1)[0]
	assert.Equal(t, watch.Added, added.Type)
	assert.Equal(t, "raw", added.Object.(*v1.Pod).Name)

	// The relay of the add has finished once its event is out, so the
	// update cannot race with it.
	p.Labels = map[string]string{"v": "2"}
	require.NoError(t, c.Client().Tracker().Update(gvr, p, "default"))
	modified := readEvents(t, w, 1)[0]
	assert.Equal(t, watch.Modified, modified.Type)
	last := modified.Object.(*v1.Pod)
	assert.Equal(t, "2", last.Labels["v"])

	_, err := pods.Create(ctx, pendingPod("api-"), metav1.CreateOptions{})
	require.NoError(t, err)
	created := readEvents(t, w, 1)[0]
	assert.Equal(t, watch.Added, created.Type)
	assert.Equal(t, "api-", created.Object.(*v1.Pod).GenerateName)

	// The watched copy's resourceVersion is the stored one: an update from
	// it succeeds.
	last.Labels["v"] = "3"
	_, err = pods.Update(ctx, last, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Equal(t, watch.Modified, readEvents(t, w, 1)[0].Type)

	require.NoError(t, c.Client().Tracker().Delete(gvr, "default", "raw"))
	assert.Equal(t, watch.Deleted, readEvents(t, w, 1)[0].Type)
	w.Stop()
}

// A raw write whose event the feeder has taken but not yet relayed (it waits
// for the lock an update holds) must not be overwritten by an update made
// from the copy read before it: the update conflicts, as on an apiserver.
func TestUpdateConflictsWithRawWriteNotYetRelayed(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	c, pods, w := watchDefaultPods(t)
	defer w.Stop()
	gvr := v1.SchemeGroupVersion.WithResource("pods")
	created, err := pods.Create(ctx, pendingPod("p-"), metav1.CreateOptions{})
	require.NoError(t, err)
	readEvents(t, w, 1)

	tr := c.tracker
	tr.mu.Lock()
	raw := created.DeepCopy()
	raw.Labels = map[string]string{"raw": "yes"}
	require.NoError(t, c.Client().Tracker().Update(gvr, raw, "default"))
	// The raw write's event is now either with the feeder's goroutine,
	// which waits for the lock held here, or still buffered, if that
	// goroutine waits with an earlier event. Either way it is taken and not
	// yet relayed: in the second case this test takes it and plays the
	// feeder's part after the update.
	var taken *watch.Event
	select {
	case e := <-tr.feeders[gvr].source.ResultChan():
		taken = &e
	default:
	}
	stale := created.DeepCopy()
	stale.Labels = map[string]string{"stale": "yes"}
	err = tr.updateLocked(gvr, stale, stale, "default")
	if taken != nil {
		tr.fromPlainTracker(gvr, *taken)
	}
	tr.mu.Unlock()
	require.True(t, apierrors.IsConflict(err), "update from the copy read before the raw write: %v", err)

	got, err := pods.Get(ctx, created.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "yes", got.Labels["raw"], "the raw write survives")
	e := readEvents(t, w, 1)[0]
	assert.Equal(t, watch.Modified, e.Type)
	assert.Equal(t, "yes", e.Object.(*v1.Pod).Labels["raw"], "watches see the raw write")
}
