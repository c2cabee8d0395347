package shard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

// lowerHalf is the share [0, 2^63).
var lowerHalf = NewRanges(Range{First: 0, Last: math.MaxUint64 / 2})

func testPod(name string, owner types.UID) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uuid.NewUUID()}}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: owner, Controller: new(true)}}
	}
	return p
}

func podListWatch(cs *fake.Clientset) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.CoreV1().Pods("").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return cs.CoreV1().Pods("").Watch(ctx, o)
		},
	}
}

// startInformer runs an informer over lw until the test ends and waits for
// its first sync.
func startInformer(t *testing.T, lw cache.ListerWatcher) cache.SharedIndexInformer {
	t.Helper()
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))
	return inf
}

func storeNames(inf cache.SharedIndexInformer) []string {
	var names []string
	for _, o := range inf.GetStore().List() {
		names = append(names, o.(*corev1.Pod).Name)
	}
	slices.Sort(names)
	return names
}

// wantNames are the names among pods whose hash (by uid) is in rs.
func wantNames(rs Ranges, hash func(metav1.Object) (uint64, error), pods ...*corev1.Pod) []string {
	var names []string
	for _, p := range pods {
		if h, err := hash(p); err == nil && rs.Contains(h) {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	return names
}

func TestShareListWatchFiltersOnTheClientWhenTheServerDoesNot(t *testing.T) {
	var pods []*corev1.Pod
	var objs []runtime.Object
	for i := range 40 {
		p := testPod(fmt.Sprintf("p%02d", i), "")
		pods = append(pods, p)
		objs = append(objs, p)
	}
	cs := fake.NewClientset(objs...) // ignores ShardSelector, as a server with the gate off
	by := ByKey(KeyUID)
	lw, err := NewShareListWatch(podListWatch(cs), lowerHalf, by)
	require.NoError(t, err)
	inf := startInformer(t, lw)

	want := wantNames(lowerHalf, by.Hash, pods...)
	require.NotEmpty(t, want)
	require.Less(t, len(want), len(pods), "the test needs pods on both sides")
	require.Equal(t, want, storeNames(inf))
	filtered, known := lw.ServerFiltered()
	require.True(t, known)
	require.False(t, filtered)

	// Watch events are filtered too.
	var later []*corev1.Pod
	for i := range 20 {
		p := testPod(fmt.Sprintf("q%02d", i), "")
		later = append(later, p)
		_, err := cs.CoreV1().Pods("ns").Create(context.Background(), p, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	want = wantNames(lowerHalf, by.Hash, append(pods, later...)...)
	require.Eventually(t, func() bool { return slices.Equal(want, storeNames(inf)) }, 5*time.Second, 10*time.Millisecond)
}

func TestShareListWatchFollowsAChildsController(t *testing.T) {
	// Find one owner UID inside the share and one outside.
	var in, out types.UID
	for in == "" || out == "" {
		uid := uuid.NewUUID()
		if lowerHalf.Contains(Hash(string(uid))) {
			in = uid
		} else {
			out = uid
		}
	}
	mine, theirs := testPod("mine", in), testPod("theirs", out)
	cs := fake.NewClientset(mine, theirs)
	lw, err := NewShareListWatch(podListWatch(cs), lowerHalf, ByController())
	require.NoError(t, err)
	inf := startInformer(t, lw)
	require.Equal(t, []string{"mine"}, storeNames(inf))
	_, known := lw.ServerFiltered()
	require.False(t, known, "no selector was sent, so the server cannot have filtered")

	// Released to the other owner: it leaves the store; adopted back: it returns.
	ctx := context.Background()
	moved := mine.DeepCopy()
	moved.OwnerReferences[0].UID = out
	_, err = cs.CoreV1().Pods("ns").Update(ctx, moved, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(storeNames(inf)) == 0 }, 5*time.Second, 10*time.Millisecond)

	back := moved.DeepCopy()
	back.OwnerReferences[0].UID = in
	_, err = cs.CoreV1().Pods("ns").Update(ctx, back, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return slices.Equal([]string{"mine"}, storeNames(inf)) }, 5*time.Second, 10*time.Millisecond)
}

// selectingServer is a ListerWatcher that honours shardSelector as a server
// with ShardedListAndWatch on: it filters and echoes the selector in
// ShardInfo, or echoes echo instead when set.
type selectingServer struct {
	pods     []corev1.Pod
	echo     string
	ignore   bool // filter nothing, as if it answered for another set
	watcher  *watch.FakeWatcher
	selector chan string
}

func (s *selectingServer) List(o metav1.ListOptions) (runtime.Object, error) {
	sel := ListSelector(o)
	s.selector <- sel
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	if sel == "" {
		// Libraries without the field: nothing was asked, all is sent.
		list.Items = s.pods
		return list, nil
	}
	key, rs, err := ParseSelector(sel)
	if err != nil {
		return nil, err
	}
	echo := sel
	if s.echo != "" {
		echo = s.echo
	}
	SetEchoedSelector(list, echo)
	for _, p := range s.pods {
		if h, _ := HashObject(&p, key); s.ignore || rs.Contains(h) {
			list.Items = append(list.Items, p)
		}
	}
	return list, nil
}

func (s *selectingServer) Watch(o metav1.ListOptions) (watch.Interface, error) {
	s.selector <- ListSelector(o)
	return s.watcher, nil
}

func TestShareListWatchSendsTheSelectorAndTrustsAnEcho(t *testing.T) {
	var pods []corev1.Pod
	var ptrs []*corev1.Pod
	for i := range 30 {
		p := testPod(fmt.Sprintf("p%02d", i), "")
		pods = append(pods, *p)
		ptrs = append(ptrs, p)
	}
	wantSel, err := lowerHalf.Selector(KeyUID)
	require.NoError(t, err)
	if !ServerSelection() {
		// Before k8s.io/apimachinery v0.36 nothing can be sent: the
		// client filters alone, and the store is the same share.
		wantSel = ""
	}
	by := ByKey(KeyUID)
	want := wantNames(lowerHalf, by.Hash, ptrs...)

	for _, tc := range []struct {
		name         string
		echo         string
		ignore       bool
		wantFiltered bool
	}{
		{name: "server filters", wantFiltered: true},
		{name: "server answers for another set", echo: "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')", ignore: true},
		{name: "server echoes another key", echo: "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')", ignore: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &selectingServer{pods: pods, echo: tc.echo, ignore: tc.ignore, watcher: watch.NewFake(), selector: make(chan string, 10)}
			lw, err := NewShareListWatch(srv, lowerHalf, by)
			require.NoError(t, err)
			inf := startInformer(t, lw)
			require.Equal(t, want, storeNames(inf))
			filtered, known := lw.ServerFiltered()
			require.True(t, known)
			require.Equal(t, tc.wantFiltered && ServerSelection(), filtered)
			require.Equal(t, wantSel, <-srv.selector, "list selector")
			require.Eventually(t, func() bool { return len(srv.selector) > 0 }, 5*time.Second, 10*time.Millisecond)
			require.Equal(t, wantSel, <-srv.selector, "watch selector")

			// A server that filters never sends an outsider; one that
			// does not is filtered here.
			var outsider *corev1.Pod
			for i := 0; outsider == nil; i++ {
				p := testPod(fmt.Sprintf("w%d", i), "")
				if h, _ := HashObject(p, KeyUID); !lowerHalf.Contains(h) {
					outsider = p
				}
			}
			insider := testPod("inside", "")
			for i := 0; ; i++ {
				if h, _ := HashObject(insider, KeyUID); lowerHalf.Contains(h) {
					break
				}
				insider = testPod(fmt.Sprintf("inside%d", i), "")
			}
			srv.watcher.Add(outsider)
			srv.watcher.Modify(outsider) // ByKey hashes never move: dropped, not a deletion
			srv.watcher.Add(insider)
			want2 := append(slices.Clone(want), insider.Name)
			slices.Sort(want2)
			require.Eventually(t, func() bool { return slices.Equal(want2, storeNames(inf)) }, 5*time.Second, 10*time.Millisecond)
		})
	}
}

func TestNewShareListWatchRefusesWhatCannotWork(t *testing.T) {
	cs := fake.NewClientset()
	_, err := NewShareListWatch(podListWatch(cs), nil, ByKey(KeyUID))
	require.True(t, errors.Is(err, ErrNoRanges), "an empty share would select everything: %v", err)
	_, err = NewShareListWatch(podListWatch(cs), lowerHalf, Sharding{Server: KeyUID})
	require.Error(t, err)
	_, err = NewShareListWatch(podListWatch(cs), lowerHalf, ByKey("object.metadata.name"))
	require.True(t, errors.Is(err, ErrUnsupportedKey), "%v", err)
	require.Panics(t, func() { _, _ = NewShareListWatch(nil, lowerHalf, ByController()) })
}

func TestFilteredWatchStops(t *testing.T) {
	inner := watch.NewFake()
	lw, err := NewShareListWatch(&cache.ListWatch{
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return inner, nil },
	}, FullRanges(), ByKey(KeyNamespace))
	require.NoError(t, err)
	w, err := lw.Watch(metav1.ListOptions{})
	require.NoError(t, err)
	go inner.Add(testPod("a", "")) // blocks until relayed or stopped
	ev := <-w.ResultChan()
	require.Equal(t, watch.Added, ev.Type)
	w.Stop()
	w.Stop() // twice is safe
	_, open := <-w.ResultChan()
	require.False(t, open)
	// goleak in TestMain checks the relay goroutine is gone.
}

// A ShareListWatch is built when its share arrives: the list an informer
// sends first, at resourceVersion 0 (any), must hold the last writes of the
// share's previous holder, which a lagging watch cache may not show. Later
// lists, not older than what the informer saw of this share, are sent as
// the informer asks.
func TestShareListWatchFirstListIsConsistent(t *testing.T) {
	var asked []metav1.ListOptions
	inner := &cache.ListWatch{
		ListWithContextFunc: func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
			asked = append(asked, o)
			return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewFake(), nil
		},
	}
	lw, err := NewShareListWatch(inner, lowerHalf, ByKey(KeyUID))
	require.NoError(t, err)
	inf := startInformer(t, lw)
	require.True(t, inf.HasSynced())
	require.NotEmpty(t, asked)
	require.Empty(t, asked[0].ResourceVersion, "the informer's first list")
	require.Empty(t, asked[0].ResourceVersionMatch)

	_, err = lw.ListWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "10", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	require.NoError(t, err)
	require.Equal(t, "10", asked[len(asked)-1].ResourceVersion, "a relist")
	require.Equal(t, metav1.ResourceVersionMatchNotOlderThan, asked[len(asked)-1].ResourceVersionMatch)
}
