package podset

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/podcontrol"
	"github.com/ctrlkit/ctrlkit/podranking"
)

// spreadScene is a ReplicaSet of one replica, its controller's only one,
// with two ready pods: on-a on node-a, ready for an hour, and on-b on
// node-b, ready for a second. Ranked by themselves the nodes tie and the
// more recently ready on-b goes first. foreign is a pod of another
// ReplicaSet, of another Deployment, on node-a, which the first one's
// selector matches too: upstream counts it among the related pods, which
// puts node-a ahead, so on-a goes first.
type spreadScene struct {
	rs, other            *appsv1.ReplicaSet
	onA, onB, foreignPod *v1.Pod
}

func newSpreadScene() spreadScene {
	rs := newRS("rs", 1, fooBar)
	other := newRS("other", 1, fooBar)
	other.OwnerReferences = []metav1.OwnerReference{{UID: "456", Controller: ptr.To(true), Kind: "Deployment", Name: "d2", APIVersion: "apps/v1"}}
	onNode := func(p *v1.Pod, node string, readyFor time.Duration) *v1.Pod {
		p.Spec.NodeName = node
		p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(time.Now().Add(-readyFor))
		return p
	}
	return spreadScene{
		rs: rs, other: other,
		onA:        onNode(newPod("on-a", rs, v1.PodRunning, fooBar, true), "node-a", time.Hour),
		onB:        onNode(newPod("on-b", rs, v1.PodRunning, fooBar, true), "node-b", time.Second),
		foreignPod: onNode(newPod("foreign", other, v1.PodRunning, fooBar, true), "node-a", time.Hour),
	}
}

// upstreamVictim is podranking's choice among the scene's own pods, ranked
// by related, as upstream's getPodsToDelete makes it.
func (s spreadScene) upstreamVictim(related ...*v1.Pod) string {
	return podranking.PodsToDelete([]*v1.Pod{s.onA, s.onB}, related, 1)[0].Name
}

// TestScaleDownCountsForeignPodsTheSelectorMatches: the related pods of an
// owner that is its controller's only one are all the pods of the namespace
// its selector matches, also those another owner controls. Taking them from
// the sync's own listing, which holds only the owner's pods and the
// orphans, would leave the foreign pod out and delete on-b.
func TestScaleDownCountsForeignPodsTheSelectorMatches(t *testing.T) {
	s := newSpreadScene()
	require.Equal(t, "on-a", s.upstreamVictim(s.onA, s.onB, s.foreignPod), "the scene: counted, the foreign pod decides")
	require.Equal(t, "on-b", s.upstreamVictim(s.onA, s.onB), "the scene: uncounted, the other pod goes")

	for _, foreign := range []bool{true, false} {
		t.Run(fmt.Sprintf("foreign=%v", foreign), func(t *testing.T) {
			e := newEnv(t, []runtime.Object{s.rs})
			e.addOwner(s.rs)
			e.addOwner(s.other)
			e.addPods(s.onA, s.onB)
			want := "on-b"
			if foreign {
				e.addPods(s.foreignPod)
				want = "on-a"
			}
			require.NoError(t, e.sync(s.rs))
			assert.Equal(t, []string{want}, e.pc.DeletePodName)
		})
	}
}

// TestRelatedOfOnlyOwner: the own listing stands for the namespace only
// when the namespace holds no other pod; otherwise the namespace's pods are
// matched; an owner with siblings is left to upstream's listing. Every pod
// given is one upstream's listing gives.
func TestRelatedOfOnlyOwner(t *testing.T) {
	s := newSpreadScene()
	unmatched := newPod("unmatched", s.other, v1.PodRunning, map[string]string{"foo": "baz"}, true)
	sibling := newRS("sibling", 1, map[string]string{"foo": "qux"})
	for _, tc := range []struct {
		name    string
		extra   []*v1.Pod
		owners  []*appsv1.ReplicaSet
		from    relatedSource
		related []string
	}{
		{name: "alone", from: fromOwnListing, related: []string{"on-a", "on-b"}},
		{name: "a foreign pod the selector matches", extra: []*v1.Pod{s.foreignPod}, from: fromNamespaceAll,
			related: []string{"on-a", "on-b", "foreign"}},
		{name: "a foreign pod it does not match", extra: []*v1.Pod{unmatched}, from: fromNamespaceAll,
			related: []string{"on-a", "on-b"}},
		{name: "a sibling", owners: []*appsv1.ReplicaSet{sibling}, from: fromNowhere},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, []runtime.Object{s.rs})
			e.addOwner(s.rs)
			for _, o := range tc.owners {
				e.addOwner(o)
			}
			e.addPods(s.onA, s.onB)
			e.addPods(tc.extra...)
			own := claimedListing(t, e, s.rs)
			siblings, err := e.c.siblings.Siblings(s.rs)
			require.NoError(t, err)
			related, from := e.c.relatedOfOnlyOwner(s.rs, siblings, own)
			require.Equal(t, tc.from, from)
			assert.ElementsMatch(t, tc.related, podNames(related))
		})
	}
}

// claimedListing lists and claims rs's pods as a sync does.
func claimedListing(t *testing.T, e *env, rs *appsv1.ReplicaSet) ownListing {
	t.Helper()
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	require.NoError(t, err)
	all, err := e.c.podsForOwner(rs)
	require.NoError(t, err)
	active, _, err := e.c.claimPods(e.ctx, rs, selector, all, false, nil)
	require.NoError(t, err)
	return ownListing{pods: all, active: active, selector: selector}
}

// bareInformer is a pod informer with no index but those podset adds,
// where client-go's factory would register the namespace index.
type bareInformer struct{ inf cache.SharedIndexInformer }

func (b bareInformer) Informer() cache.SharedIndexInformer { return b.inf }
func (b bareInformer) Lister() corelisters.PodLister {
	return corelisters.NewPodLister(b.inf.GetIndexer())
}

// TestScaleDownWithoutNamespaceIndex: on a pod informer without the
// namespace index the pods of the namespace cannot be counted, so the
// related pods are listed as upstream lists them, and the foreign pod still
// counts.
func TestScaleDownWithoutNamespaceIndex(t *testing.T) {
	for _, foreign := range []bool{true, false} {
		t.Run(fmt.Sprintf("foreign=%v", foreign), func(t *testing.T) {
			s := newSpreadScene()
			_, ctx := ktesting.NewTestContext(t)
			client := fake.NewSimpleClientset(s.rs)
			f := informers.NewSharedInformerFactory(client, 0)
			rsInf := f.Apps().V1().ReplicaSets().Informer()
			podInf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &v1.Pod{}, 0, cache.Indexers{})
			pc := &podcontrol.FakePodControl{}
			c, err := New(ctx, client, bareInformer{podInf}, rsInf, Kind[*appsv1.ReplicaSet](rsKind{client: client, indexer: rsInf.GetIndexer()}),
				WithPodControl(pc), WithEventRecorder(record.NewFakeRecorder(100)))
			require.NoError(t, err)
			_, hasNamespaceIndex := podInf.GetIndexer().GetIndexers()[cache.NamespaceIndex]
			require.False(t, hasNamespaceIndex, "the test needs an informer without the namespace index")
			require.NoError(t, rsInf.GetIndexer().Add(s.rs))
			require.NoError(t, rsInf.GetIndexer().Add(s.other))
			pods := []*v1.Pod{s.onA, s.onB}
			want := "on-b"
			if foreign {
				pods, want = append(pods, s.foreignPod), "on-a"
			}
			for _, p := range pods {
				require.NoError(t, podInf.GetIndexer().Add(p))
			}

			own := ownListing{selector: labels.SelectorFromSet(fooBar)}
			own.pods, err = c.podsForOwner(s.rs)
			require.NoError(t, err)
			own.active = own.pods
			_, from := c.relatedOfOnlyOwner(s.rs, []*appsv1.ReplicaSet{s.rs}, own)
			assert.Equal(t, fromNowhere, from, "without the namespace index the pods are listed as upstream lists them")

			require.NoError(t, c.Sync(ctx, s.rs.Namespace+"/"+s.rs.Name))
			assert.Equal(t, []string{want}, pc.DeletePodName)
		})
	}
}

// TestRelatedOfOnlyOwnerCountsAsUpstream compares, over random namespaces,
// the active related pods per node of an only owner with those of
// upstream's listing by selector: owned, orphaned and foreign pods,
// matching or not, active, terminating or finished, on a few nodes, with
// now and then a repeated UID. Each node counts the same active pods; the
// own listing is used exactly when the namespace holds nothing but the
// owner's pods and the orphans and no UID repeats.
func TestRelatedOfOnlyOwnerCountsAsUpstream(t *testing.T) {
	used := 0
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 1))
		rs := newRS("rs", 1, fooBar)
		other := newRS("other", 1, fooBar)
		e := newEnv(t, []runtime.Object{rs})
		e.addOwner(rs)
		foreignPods, repeated := false, false
		var uids []types.UID
		for i := range 1 + r.IntN(12) {
			lbls := fooBar
			if r.IntN(4) == 0 {
				lbls = map[string]string{"foo": "baz"}
			}
			var p *v1.Pod
			switch r.IntN(5) {
			case 0:
				p = newPod(fmt.Sprintf("orphan-%d", i), rs, v1.PodRunning, lbls, false)
			case 1:
				p = newPod(fmt.Sprintf("foreign-%d", i), other, v1.PodRunning, lbls, true)
				foreignPods = true
			default:
				p = newPod(fmt.Sprintf("own-%d", i), rs, v1.PodRunning, lbls, true)
			}
			p.Spec.NodeName = fmt.Sprintf("node-%d", r.IntN(3))
			switch r.IntN(6) {
			case 0:
				p.Status.Phase = v1.PodSucceeded
			case 1:
				p.DeletionTimestamp = ptr.To(metav1.Now())
			}
			if r.IntN(15) == 0 && len(uids) > 0 {
				p.UID = uids[r.IntN(len(uids))]
				repeated = true
			}
			uids = append(uids, p.UID)
			e.addPods(p)
		}
		own := claimedListing(t, e, rs)
		related, from := e.c.relatedOfOnlyOwner(rs, []*appsv1.ReplicaSet{rs}, own)
		if !foreignPods && !repeated {
			require.Equal(t, fromOwnListing, from, "seed %d", seed)
			used++
		} else {
			require.Equal(t, fromNamespaceAll, from, "seed %d", seed)
		}
		upstream, err := e.c.relatedPods(rs)
		require.NoError(t, err)
		if repeated {
			// Which of two pods with one UID counts depends on the
			// listing order, here as upstream; both count the same pods.
			assert.Equal(t, len(upstream), len(related), "seed %d", seed)
			continue
		}
		assert.Equal(t, activeOnNodes(upstream), activeOnNodes(related), "seed %d", seed)
	}
	assert.Greater(t, used, 30, "the own listing was used in enough cases to compare")
}

// activeOnNodes counts the active pods on each node.
func activeOnNodes(pods []*v1.Pod) map[string]int {
	counts := map[string]int{}
	for _, p := range pods {
		if p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed && p.DeletionTimestamp == nil {
			counts[p.Spec.NodeName]++
		}
	}
	return counts
}

// TestRelatedOfOnlyOwnerAfterTheCacheChanged: the cache changes between
// the sync's own listing and the related pods: one of the owner's pods
// goes while a foreign pod the selector matches stays, so the namespace
// still holds as many pods as the listing. The related pods are upstream's
// as it would list them now, the foreign pod among them, not the listing's.
func TestRelatedOfOnlyOwnerAfterTheCacheChanged(t *testing.T) {
	s := newSpreadScene()
	e := newEnv(t, []runtime.Object{s.rs})
	e.addOwner(s.rs)
	e.addOwner(s.other)
	e.addPods(s.onA, s.onB)
	own := claimedListing(t, e, s.rs)
	require.Len(t, own.pods, 2)

	require.NoError(t, e.podStore().Delete(s.onB))
	e.addPods(s.foreignPod)
	related, from := e.c.relatedOfOnlyOwner(s.rs, []*appsv1.ReplicaSet{s.rs}, own)
	assert.Equal(t, fromNamespaceAll, from)
	upstream, err := e.c.relatedPods(s.rs)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"on-a", "foreign"}, podNames(upstream))
	assert.ElementsMatch(t, podNames(upstream), podNames(related))
}

// TestSameObjects: the namespace's listing stands for the own listing only
// when it holds the very same objects, none added, missing or replaced by
// an update, and no two of them share a UID; nil entries of the own
// listing are skipped.
func TestSameObjects(t *testing.T) {
	pod := func(uid string) *v1.Pod { return &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}} }
	a, b, c := pod("a"), pod("b"), pod("c")
	sameUIDAsA := pod("a")
	for _, tc := range []struct {
		name        string
		own         []*v1.Pod
		inNamespace []any
		same        bool
	}{
		{name: "none", same: true},
		{name: "equal", own: []*v1.Pod{a, b}, inNamespace: []any{b, a}, same: true},
		{name: "nil entries", own: []*v1.Pod{nil, a, nil, b}, inNamespace: []any{a, b}, same: true},
		{name: "one more in the namespace", own: []*v1.Pod{a, b}, inNamespace: []any{a, b, c}},
		{name: "one gone", own: []*v1.Pod{a, b}, inNamespace: []any{a}},
		{name: "one swapped for another", own: []*v1.Pod{a, b}, inNamespace: []any{a, c}},
		{name: "one replaced by an update", own: []*v1.Pod{a, b}, inNamespace: []any{sameUIDAsA, b}},
		{name: "a repeated UID", own: []*v1.Pod{a, sameUIDAsA}, inNamespace: []any{a, sameUIDAsA}},
		{name: "not a pod", own: []*v1.Pod{a}, inNamespace: []any{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.same, sameObjects(ownListing{pods: tc.own}, tc.inNamespace))
			// Again, on the sets the first call left for reuse.
			assert.Equal(t, tc.same, sameObjects(ownListing{pods: tc.own}, tc.inNamespace), "second call")
			// With the claim memo holding the listing's pods, as a sync
			// whose claim judged every pod passes it.
			memo := memoOf(tc.own)
			assert.Equal(t, tc.same, sameObjects(ownListing{pods: tc.own, memo: memo}, tc.inNamespace), "from the memo")
			assert.Equal(t, tc.same, sameObjects(ownListing{pods: tc.own, memo: memo}, tc.inNamespace), "from the memo, again")
		})
	}
	own := make([]*v1.Pod, 5000)
	inNamespace := make([]any, len(own))
	for i := range own {
		own[i] = pod(fmt.Sprintf("uid-%d", i))
		inNamespace[len(own)-1-i] = own[i]
	}
	memo := memoOf(own)
	assert.True(t, sameObjects(ownListing{pods: own}, inNamespace))
	assert.True(t, sameObjects(ownListing{pods: own, memo: memo}, inNamespace))
	inNamespace[1234] = pod("uid-x")
	assert.False(t, sameObjects(ownListing{pods: own}, inNamespace))
	assert.False(t, sameObjects(ownListing{pods: own, memo: memo}, inNamespace))
}

// memoOf is a claim memo holding the non-nil pods of own.
func memoOf(own []*v1.Pod) *claimMemo {
	m := &claimMemo{pods: map[*v1.Pod]podVerdict{}}
	for _, p := range own {
		if p != nil {
			m.add(p, podVerdict{})
		}
	}
	return m
}
