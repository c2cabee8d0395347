package podset

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/internal/trimtest"
	"github.com/ctrlkit/ctrlkit/status"
)

// TestClaimMemoMatchesAFreshClaim runs claimPods sync after sync on one
// controller, whose memo then answers for the pods it has seen, while
// between syncs pods are replaced by changed copies (as the informer
// replaces them), added and removed, and the selector or template labels
// change. Every sync must return what a controller without a memo returns
// for the same pods.
func TestClaimMemoMatchesAFreshClaim(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	rs := newRS("foobar", 3, fooBar)
	other := newRS("other", 3, fooBar)
	now := metav1.Now()
	labelSets := []map[string]string{fooBar, {"foo": "baz"}, {"foo": "bar", "extra": "x"}}
	mk := func(i int) *v1.Pod {
		owner := rs
		if r.IntN(5) == 0 {
			owner = other
		}
		phases := []v1.PodPhase{v1.PodRunning, v1.PodPending, v1.PodSucceeded, v1.PodFailed}
		// Owned pods only, or ones another owner controls: an orphan the
		// selector matches would be adopted, a write that changes nothing
		// in this test's pods and is checked elsewhere.
		p := newPod("pod-"+strconv.Itoa(i), owner, phases[r.IntN(len(phases))], labelSets[r.IntN(len(labelSets))], true)
		if r.IntN(6) == 0 {
			p.DeletionTimestamp = &now
		}
		if r.IntN(3) == 0 {
			p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: now}}
		}
		return p
	}
	pods := make([]*v1.Pod, 50)
	for i := range pods {
		pods[i] = mk(i)
	}
	memoised := newEnv(t, nil)
	selector := labels.SelectorFromSet(fooBar)
	tmplLabels := rs.Spec.Template.Labels
	for sync := range 200 {
		switch r.IntN(10) {
		case 0:
			selector = labels.SelectorFromSet(map[string]string{"foo": "bar", "extra": "x"})
		case 1:
			selector = labels.SelectorFromSet(fooBar)
		case 2:
			rs = rs.DeepCopy()
			rs.Spec.Template.Labels = labelSets[r.IntN(len(labelSets))]
			tmplLabels = rs.Spec.Template.Labels
		}
		for range r.IntN(5) {
			i := r.IntN(len(pods))
			if r.IntN(4) == 0 {
				pods = append(pods[:i], pods[i+1:]...)
			} else {
				pods[i] = mk(i) // a new object for a changed pod
			}
		}
		if r.IntN(3) == 0 {
			pods = append(pods, mk(1000+sync))
		}
		withTerminating := r.IntN(2) == 0
		counted := r.IntN(4) != 0
		var c1, c2 *status.ReplicaCounter
		if counted {
			a, b := status.NewReplicaCounter(tmplLabels, 0, time.Time{}), status.NewReplicaCounter(tmplLabels, 0, time.Time{})
			c1, c2 = &a, &b
		}
		fresh := newEnv(t, nil)
		wantActive, wantTerm, err := fresh.c.claimPods(fresh.ctx, rs, selector, append([]*v1.Pod(nil), pods...), withTerminating, c1)
		require.NoError(t, err)
		gotActive, gotTerm, err := memoised.c.claimPods(memoised.ctx, rs, selector, append([]*v1.Pod(nil), pods...), withTerminating, c2)
		require.NoError(t, err)
		require.Equal(t, wantActive, gotActive, "sync %d", sync)
		require.Equal(t, wantTerm, gotTerm, "sync %d", sync)
		if counted {
			require.Equal(t, c1.Counts(), c2.Counts(), "sync %d", sync)
		}
		memo, _ := memoised.c.memos.claims.Peek(ownerKey(rs))
		require.NotNil(t, memo)
		assert.LessOrEqual(t, len(memo.pods), len(pods), "sync %d: the memo holds only pods of the last listing", sync)
	}
	memoised.c.ObserveOwnerDelete(rs)
	assert.Zero(t, memoised.c.memos.claims.Len(), "an owner's memo goes with it")
}

// TestClaimMemoSkipsTimedCounts checks that a count that depends on the
// time (minReadySeconds) is never served from the memo.
func TestClaimMemoSkipsTimedCounts(t *testing.T) {
	rs := newRS("foobar", 1, fooBar)
	pod := newPod("ready", rs, v1.PodRunning, fooBar, true)
	readyAt := time.Now()
	pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(readyAt)}}
	e := newEnv(t, nil)
	selector := labels.SelectorFromSet(fooBar)
	for _, at := range []time.Time{readyAt.Add(5 * time.Second), readyAt.Add(time.Minute)} {
		counter := status.NewReplicaCounter(rs.Spec.Template.Labels, 30, at)
		_, _, err := e.c.claimPods(e.ctx, rs, selector, []*v1.Pod{pod}, false, &counter)
		require.NoError(t, err)
		assert.Equal(t, status.CountReplicas([]*v1.Pod{pod}, rs.Spec.Template.Labels, 30, at), counter.Counts())
	}
}

// TestClaimMemoGoesWithTheOwner: a sync keeps its owner's memo; a re-created
// owner of the same name starts a new one; the memo is dropped when a sync
// finds the owner gone, when the owner is held by another replica, and on
// the owner's delete event, so that no memo holds pods for an owner this
// controller no longer syncs.
func TestClaimMemoGoesWithTheOwner(t *testing.T) {
	rs := newRS("foobar", 2, fooBar)
	key := rs.Namespace + "/" + rs.Name
	var held atomic.Bool
	held.Store(true)
	guard := func(ctx context.Context, _ string) (context.Context, func(), time.Duration, bool) {
		if !held.Load() {
			return ctx, nil, 0, false
		}
		return ctx, func() {}, 0, true
	}
	e := newEnv(t, []runtime.Object{rs}, WithSyncGuard(guard))
	e.addOwner(rs)
	e.addPods(newPod("a", rs, v1.PodRunning, fooBar, true), newPod("b", rs, v1.PodRunning, fooBar, true))
	memo := func() *claimMemo {
		m, _ := e.c.memos.claims.Peek(key)
		return m
	}
	listing := func() *podListing {
		l, _ := e.c.memos.listings.Peek(key)
		return l
	}

	require.NoError(t, e.sync(rs))
	first, firstListing := memo(), listing()
	require.NotNil(t, firstListing)
	require.NotNil(t, first)
	require.Len(t, first.pods, 2)
	require.NoError(t, e.sync(rs))
	require.Same(t, first, memo(), "kept from one sync to the next")
	require.Same(t, firstListing, listing(), "kept from one sync to the next")

	recreated := rs.DeepCopy()
	recreated.UID = "another-incarnation"
	require.NoError(t, e.inf.Apps().V1().ReplicaSets().Informer().GetIndexer().Update(recreated))
	require.NoError(t, e.sync(recreated))
	require.NotSame(t, first, memo(), "a re-created owner starts afresh")
	require.Equal(t, recreated.UID, memo().uid)
	require.NotSame(t, firstListing, listing(), "a re-created owner starts afresh")
	require.Equal(t, recreated.UID, listing().uid)

	held.Store(false)
	_, err := e.c.Reconcile(e.ctx, key)
	require.NoError(t, err)
	require.Nil(t, memo(), "dropped when another replica holds the owner")
	require.Nil(t, listing(), "dropped when another replica holds the owner")

	held.Store(true)
	require.NoError(t, e.sync(recreated))
	require.NotNil(t, memo())
	e.c.ObserveOwnerDelete(recreated)
	require.Nil(t, memo(), "dropped on the owner's delete")
	require.Nil(t, listing(), "dropped on the owner's delete")

	require.NoError(t, e.sync(recreated))
	require.NotNil(t, memo())
	require.NoError(t, e.inf.Apps().V1().ReplicaSets().Informer().GetIndexer().Delete(recreated))
	_, err = e.c.Reconcile(e.ctx, key)
	require.NoError(t, err)
	require.Nil(t, memo(), "dropped when a sync finds the owner gone")
	require.Nil(t, listing(), "dropped when a sync finds the owner gone")
}

// readCountingIndexer counts the reads of the pod-by-owner index.
type readCountingIndexer struct {
	cache.Indexer
	reads int
}

func (c *readCountingIndexer) ByIndex(name, value string) ([]any, error) {
	if name == PodControllerIndex {
		c.reads++
	}
	return c.Indexer.ByIndex(name, value)
}

// TestSyncReadsPodsOnlyWhenTheyChanged: a sync of an owner none of whose
// pods changed since its last sync reads no pod from the store, and a
// change of a pod, or a new orphan, is seen by the next sync.
func TestSyncReadsPodsOnlyWhenTheyChanged(t *testing.T) {
	rs := newRS("foobar", 2, fooBar)
	e := newEnv(t, []runtime.Object{rs})
	store := &readCountingIndexer{Indexer: e.c.podIndexer}
	e.c.podIndexer = store
	e.addOwner(rs)
	e.addPods(newPod("a", rs, v1.PodRunning, fooBar, true), newPod("b", rs, v1.PodRunning, fooBar, true))
	status := func() appsv1.ReplicaSetStatus {
		t.Helper()
		got, err := e.client.AppsV1().ReplicaSets(rs.Namespace).Get(e.ctx, rs.Name, metav1.GetOptions{})
		require.NoError(t, err)
		return got.Status
	}

	require.NoError(t, e.sync(rs))
	require.Equal(t, int32(2), status().ReadyReplicas)
	reads := store.reads
	require.NoError(t, e.sync(rs))
	assert.Equal(t, reads, store.reads, "no pod changed: nothing read")

	unready := newPod("b", rs, v1.PodPending, fooBar, true)
	require.NoError(t, e.podStore().Update(trimtest.Pod(t, unready, TrimPod)))
	require.NoError(t, e.sync(rs))
	assert.Greater(t, store.reads, reads, "a pod changed: read again")
	assert.Equal(t, int32(1), status().ReadyReplicas, "the change is counted")

	orphan := newPod("c", rs, v1.PodRunning, fooBar, false)
	reads = store.reads
	e.addPods(orphan)
	require.NoError(t, e.sync(rs))
	assert.Greater(t, store.reads, reads, "a new orphan: read again")
	e.requireCounts(0, 1, 1) // the orphan adopted, and one of three pods deleted
}
