package simcluster

import (
	"context"
	"fmt"
	"slices"
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
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

var podsResource = v1.SchemeGroupVersion.WithResource("pods")

// requireNoEvent fails if w delivers an event within a short wait. A held
// event would be delivered at once if the hold leaked, so a short wait is
// enough to catch it.
func requireNoEvent(t *testing.T, w watch.Interface) {
	t.Helper()
	select {
	case e := <-w.ResultChan():
		t.Fatalf("event delivered during the hold: %s %v", e.Type, e.Object)
	case <-time.After(100 * time.Millisecond):
	}
}

func namedPod(name string) *v1.Pod {
	p := pendingPod("")
	p.Name = name
	return p
}

// While pods are held, writes succeed and reads see them, watches get
// nothing; the release delivers every held event in order. Other
// resources are not held.
func TestHoldWatchesDeliversInOrderOnRelease(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	c, pods, w := watchDefaultPods(t)
	defer w.Stop()
	cms := c.Client().CoreV1().ConfigMaps("default")
	cmWatch, err := cms.Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	defer cmWatch.Stop()

	_, err = pods.Create(ctx, namedPod("before"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Equal(t, "before", readEvents(t, w, 1)[0].Object.(*v1.Pod).Name)

	release := c.HoldWatches(podsResource)
	for _, name := range []string{"a", "b", "c"} {
		_, err := pods.Create(ctx, namedPod(name), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	require.NoError(t, pods.Delete(ctx, "b", metav1.DeleteOptions{}))
	_, err = cms.Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{})
	require.NoError(t, err)

	got, err := pods.Get(ctx, "a", metav1.GetOptions{})
	require.NoError(t, err, "a held write is readable at once")
	assert.Equal(t, "a", got.Name)
	list, err := pods.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, list.Items, 3, "a consistent list shows the live state: before, a, c")
	assert.Equal(t, "cm", readEvents(t, cmWatch, 1)[0].Object.(*v1.ConfigMap).Name, "configmaps are not held")
	requireNoEvent(t, w)

	release()
	release() // idempotent
	events := readEvents(t, w, 4)
	var seen []string
	for _, e := range events {
		seen = append(seen, fmt.Sprintf("%s %s", e.Type, e.Object.(*v1.Pod).Name))
	}
	assert.Equal(t, []string{"ADDED a", "ADDED b", "ADDED c", "DELETED b"}, seen)

	_, err = pods.Create(ctx, namedPod("after"), metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "after", readEvents(t, w, 1)[0].Object.(*v1.Pod).Name, "delivery is live again")
}

// Holds nest: delivery resumes when the last one is released.
func TestHoldWatchesNest(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	c, pods, w := watchDefaultPods(t)
	defer w.Stop()
	first := c.HoldWatches(podsResource)
	second := c.HoldWatches(podsResource)
	_, err := pods.Create(ctx, namedPod("a"), metav1.CreateOptions{})
	require.NoError(t, err)
	first()
	first() // a second call of the same release does not release the other hold
	requireNoEvent(t, w)
	second()
	assert.Equal(t, "a", readEvents(t, w, 1)[0].Object.(*v1.Pod).Name)
}

// Watches opened during a hold, however they start, are held too, and get
// the held events on release, once.
func TestHoldWatchesCoversWatchesOpenedDuringTheHold(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	c := New(WithNodes(0))
	pods := c.Client().CoreV1().Pods("default")
	_, err := pods.Create(ctx, namedPod("old"), metav1.CreateOptions{})
	require.NoError(t, err)
	list, err := pods.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)

	release := c.HoldWatches(podsResource)
	_, err = pods.Create(ctx, namedPod("held"), metav1.CreateOptions{})
	require.NoError(t, err)

	fromScratch, err := pods.Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	defer fromScratch.Stop()
	fromList, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	require.NoError(t, err)
	defer fromList.Stop()

	e := readEvents(t, fromScratch, 1)[0]
	assert.Equal(t, "old", e.Object.(*v1.Pod).Name, "a new watch starts from the state when the hold began")
	requireNoEvent(t, fromScratch)
	requireNoEvent(t, fromList)

	release()
	assert.Equal(t, "held", readEvents(t, fromScratch, 1)[0].Object.(*v1.Pod).Name)
	assert.Equal(t, "held", readEvents(t, fromList, 1)[0].Object.(*v1.Pod).Name)
	requireNoEvent(t, fromScratch)
}

// An informer that (re)lists during a hold does not see the held writes:
// its list, with resourceVersion "0", is served from the state watches have
// seen. The release brings them, and informers started before and during
// the hold end up with the same store.
func TestHoldWatchesInformerRelistSeesNoHeldObject(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := New(WithNodes(0))
	pods := c.Client().CoreV1().Pods("default")
	require.NoError(t, c.Add(namedPod("seeded")))

	before := informers.NewSharedInformerFactory(c.Client(), 0)
	beforeInf := before.Core().V1().Pods().Informer()
	before.Start(ctx.Done())
	require.True(t, cache.WaitForCacheSync(ctx.Done(), beforeInf.HasSynced))

	release := c.HoldWatches(podsResource)
	for i := range 5 {
		_, err := pods.Create(ctx, namedPod(fmt.Sprintf("held-%d", i)), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	require.NoError(t, pods.Delete(ctx, "seeded", metav1.DeleteOptions{}))

	during := informers.NewSharedInformerFactory(c.Client(), 0)
	duringInf := during.Core().V1().Pods().Informer()
	during.Start(ctx.Done())
	require.True(t, cache.WaitForCacheSync(ctx.Done(), duringInf.HasSynced))

	time.Sleep(100 * time.Millisecond) // room for a leak to show
	assert.Equal(t, []string{"default/seeded"}, storeKeys(beforeInf.GetStore()))
	assert.Equal(t, []string{"default/seeded"}, storeKeys(duringInf.GetStore()), "the relist shows the state when the hold began")

	live, err := pods.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, live.Items, 5, "a consistent list is live")

	release()
	want := []string{"default/held-0", "default/held-1", "default/held-2", "default/held-3", "default/held-4"}
	for _, inf := range []cache.SharedIndexInformer{beforeInf, duringInf} {
		require.Eventually(t, func() bool { return slices.Equal(storeKeys(inf.GetStore()), want) },
			30*time.Second, 5*time.Millisecond, "store after release: %v", storeKeys(inf.GetStore()))
	}
	cancel()
	before.Shutdown()
	during.Shutdown()
}

func storeKeys(s cache.Store) []string {
	keys := s.ListKeys()
	slices.Sort(keys)
	return keys
}

// A hold keeps its events in the log however many other writes happen, so
// a watch opened during it can still be handed every one of them.
func TestHoldWatchesKeepsHeldEventsPastTheHistory(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	c := New(WithNodes(0))
	pods := c.Client().CoreV1().Pods("default")
	cms := c.Client().CoreV1().ConfigMaps("default")
	release := c.HoldWatches(podsResource)
	_, err := pods.Create(ctx, namedPod("held"), metav1.CreateOptions{})
	require.NoError(t, err)
	cm, err := cms.Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "busy"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	for range 2*eventHistory + 1 {
		cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	requireNoEvent(t, w)
	release()
	assert.Equal(t, "held", readEvents(t, w, 1)[0].Object.(*v1.Pod).Name)
}

func TestFailAfterApplyingStoresAndFails(t *testing.T) {
	c := New()
	timeout := apierrors.NewTimeoutError("etcd was slow", 0)
	c.FailAfterApplying("create", "configmaps", func(k8stesting.Action) error { return timeout })
	cms := c.Client().CoreV1().ConfigMaps("ns")
	_, err := cms.Create(context.Background(), &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if !apierrors.IsTimeout(err) {
		t.Fatalf("create answered %v, want a 504", err)
	}
	if _, err := cms.Get(context.Background(), "a", metav1.GetOptions{}); err != nil {
		t.Fatalf("the object was not stored: %v", err)
	}
	_, err = cms.Create(context.Background(), &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create answered %v, want AlreadyExists", err)
	}
}
