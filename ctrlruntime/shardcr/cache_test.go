package shardcr_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/shardcr"
	"github.com/ctrlkit/ctrlkit/shard"
)

// fakeServer is a ListerWatcher that answers with fixed pods and records
// what it was asked.
type fakeServer struct {
	pods    []corev1.Pod
	echo    bool // answer with ShardInfo, as a server with the gate on
	lists   []metav1.ListOptions
	watches []metav1.ListOptions
	w       *watch.FakeWatcher
}

func (s *fakeServer) listWatch() *toolscache.ListWatch {
	return &toolscache.ListWatch{
		ListWithContextFunc: func(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			s.lists = append(s.lists, opts)
			list := &corev1.PodList{Items: slices.Clone(s.pods)}
			list.ResourceVersion = "10"
			if sel := shard.ListSelector(opts); s.echo && sel != "" {
				shard.SetEchoedSelector(list, sel)
			}
			return list, nil
		},
		WatchFuncWithContext: func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			s.watches = append(s.watches, opts)
			s.w = watch.NewFakeWithChanSize(10, false)
			return s.w, nil
		},
	}
}

// wrapped returns the ListerWatcher the filter gives the informer of obj.
func wrapped(t *testing.T, f func(shardcr.NewInformerFunc) *shardcr.CacheFilter, obj runtime.Object, lw toolscache.ListerWatcher) toolscache.ListerWatcherWithContext {
	t.Helper()
	var got toolscache.ListerWatcher
	capture := func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, ix toolscache.Indexers) toolscache.SharedIndexInformer {
		got = lw
		return toolscache.NewSharedIndexInformer(lw, obj, resync, ix)
	}
	f(capture).NewInformer(lw, obj, 0, toolscache.Indexers{})
	require.NotNil(t, got)
	return toolscache.ToListerWatcherWithContext(got)
}

func names(t *testing.T, list runtime.Object) []string {
	t.Helper()
	var out []string
	for _, p := range list.(*corev1.PodList).Items {
		out = append(out, p.Name)
	}
	return out
}

// Owners are listed with the share's shardSelector; an answer without
// ShardInfo is filtered on the client, one that echoes the selector is
// trusted as it is.
func TestCacheFilterListsOwnersByShard(t *testing.T) {
	in, out := podOf("in", nil), podOf("out", nil)
	held := only(uidHash(in.UID))
	share := newFixedShare(held)
	filter := func(next shardcr.NewInformerFunc) *shardcr.CacheFilter {
		return shardcr.NewCacheFilter(shardcr.New(share, shard.KeyUID), clientgoscheme.Scheme, next).Owners(&corev1.Pod{})
	}
	want, err := held.Selector(shard.KeyUID)
	require.NoError(t, err)
	if !shard.ServerSelection() {
		// Libraries before v0.36 carry no selector: only the client
		// filters, and the cache holds the same share.
		want = ""
	}

	for _, echo := range []bool{false, true} {
		srv := &fakeServer{pods: []corev1.Pod{*in, *out}, echo: echo}
		lw := wrapped(t, filter, &corev1.Pod{}, srv.listWatch())
		list, err := lw.ListWithContext(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		assert.Equal(t, want, shard.ListSelector(srv.lists[0]))
		if echo && shard.ServerSelection() {
			// A server that filtered is trusted: the test server did not,
			// which shows the client did not filter again.
			assert.Equal(t, []string{"in", "out"}, names(t, list))
		} else {
			assert.Equal(t, []string{"in"}, names(t, list))
		}
		w, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "10"})
		require.NoError(t, err)
		w.Stop()
		assert.Equal(t, want, shard.ListSelector(srv.watches[0]))
	}

	// A relist while the share is empty (a lapse) keeps the last share.
	srv := &fakeServer{pods: []corev1.Pod{*in, *out}}
	lw := wrapped(t, filter, &corev1.Pod{}, srv.listWatch())
	_, err = lw.ListWithContext(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	share.set(nil)
	list, err := lw.ListWithContext(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, want, shard.ListSelector(srv.lists[1]))
	assert.Equal(t, []string{"in"}, names(t, list))

	// A replica that never held anything sends no selector (the server
	// would read "" as everything) and keeps nothing.
	srv = &fakeServer{pods: []corev1.Pod{*in, *out}}
	lw = wrapped(t, filter, &corev1.Pod{}, srv.listWatch())
	list, err = lw.ListWithContext(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, shard.ListSelector(srv.lists[0]))
	assert.Empty(t, names(t, list))
}

// A list of a share other than the last list's is a consistent read: the
// reflector lists again not older than the last resourceVersion it saw,
// which a lagging watch cache may answer without the last writes the
// share's previous holder made to the hashes that just arrived. A relist of
// the same share, or during a lapse (which keeps the last share), is sent
// as the reflector asks.
func TestCacheFilterListsANewShareConsistently(t *testing.T) {
	in, out := podOf("in", nil), podOf("out", nil)
	share := newFixedShare(only(uidHash(in.UID)))
	filter := func(next shardcr.NewInformerFunc) *shardcr.CacheFilter {
		return shardcr.NewCacheFilter(shardcr.New(share, shard.KeyUID), clientgoscheme.Scheme, next).Owners(&corev1.Pod{})
	}
	srv := &fakeServer{pods: []corev1.Pod{*in, *out}}
	lw := wrapped(t, filter, &corev1.Pod{}, srv.listWatch())
	relist := metav1.ListOptions{ResourceVersion: "10", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
	sent := func() string {
		_, err := lw.ListWithContext(context.Background(), relist)
		require.NoError(t, err)
		return srv.lists[len(srv.lists)-1].ResourceVersion
	}

	assert.Empty(t, sent(), "the first share")
	assert.Equal(t, "10", sent(), "the same share again")
	share.set(only(uidHash(in.UID)).Union(only(uidHash(out.UID))))
	assert.Empty(t, sent(), "a share that grew")
	share.set(nil)
	assert.Equal(t, "10", sent(), "a lapse keeps the last share")
	assert.Empty(t, srv.lists[0].ResourceVersionMatch, "a list without resourceVersion has no match")
}

// Kinds not registered keep controller-runtime's ListerWatcher.
func TestCacheFilterLeavesOtherKindsAlone(t *testing.T) {
	srv := &fakeServer{}
	orig := srv.listWatch()
	var got toolscache.ListerWatcher
	capture := func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, ix toolscache.Indexers) toolscache.SharedIndexInformer {
		got = lw
		return toolscache.NewSharedIndexInformer(lw, obj, resync, ix)
	}
	f := shardcr.NewCacheFilter(shardcr.New(newFixedShare(nil), shard.KeyUID), clientgoscheme.Scheme, capture).Owners(&appsv1.ReplicaSet{})
	f.NewInformer(orig, &corev1.Pod{}, 0, toolscache.Indexers{})
	assert.Same(t, orig, got)
}

func next(t *testing.T, w watch.Interface) (watch.Event, bool) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		return ev, ok
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
		return watch.Event{}, false
	}
}

// Children by owner UID: the server cannot filter, the watch does. A child
// whose controller moves out of the share leaves the store as a deletion;
// objects the store never had produce no event; orphans stay. When the
// share changes, the watch ends with 410 Expired, so the reflector lists
// again.
func TestCacheFilterWatchesChildrenByController(t *testing.T) {
	mine, theirs := replicaSet("mine", "uid-mine"), replicaSet("theirs", "uid-theirs")
	share := newFixedShare(only(uidHash(mine.UID)))
	filter := func(next shardcr.NewInformerFunc) *shardcr.CacheFilter {
		return shardcr.NewCacheFilter(shardcr.New(share, shard.KeyUID), clientgoscheme.Scheme, next).Children(&corev1.Pod{})
	}
	srv := &fakeServer{pods: []corev1.Pod{*podOf("a", mine), *podOf("b", theirs), *podOf("orphan", nil)}}
	lw := wrapped(t, filter, &corev1.Pod{}, srv.listWatch())
	list, err := lw.ListWithContext(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, shard.ListSelector(srv.lists[0]), "a controller reference cannot be selected on the server")
	assert.Equal(t, []string{"a", "orphan"}, names(t, list))

	w, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "10"})
	require.NoError(t, err)
	defer w.Stop()
	srv.w.Add(podOf("c", theirs))    // dropped
	srv.w.Modify(podOf("b", theirs)) // dropped: the store never had it
	srv.w.Delete(podOf("b", theirs)) // dropped
	srv.w.Add(podOf("d", mine))      // passes
	srv.w.Modify(podOf("a", theirs)) // a moved out: a deletion
	srv.w.Action(watch.Bookmark, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "12"}})

	ev, _ := next(t, w)
	assert.Equal(t, watch.Added, ev.Type)
	assert.Equal(t, "d", ev.Object.(*corev1.Pod).Name)
	ev, _ = next(t, w)
	assert.Equal(t, watch.Deleted, ev.Type)
	assert.Equal(t, "a", ev.Object.(*corev1.Pod).Name)
	ev, _ = next(t, w)
	assert.Equal(t, watch.Bookmark, ev.Type)

	// A lapse (no share at all) keeps the watch and the cache.
	share.set(nil)
	srv.w.Add(podOf("e", mine))
	ev, _ = next(t, w)
	assert.Equal(t, watch.Added, ev.Type, "the watch goes on through an empty share")
	assert.Equal(t, "e", ev.Object.(*corev1.Pod).Name)

	share.set(only(uidHash(theirs.UID)))
	ev, _ = next(t, w)
	require.Equal(t, watch.Error, ev.Type)
	assert.True(t, apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)), "%v", ev.Object)
	_, open := next(t, w)
	assert.False(t, open, "the watch ends after the error")

	// A watch resumed without a new list after a change expires at once.
	share.set(only(uidHash(mine.UID)))
	_, err = lw.ListWithContext(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	share.set(only(uidHash(theirs.UID)))
	w2, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "10"})
	require.NoError(t, err)
	defer w2.Stop()
	ev, _ = next(t, w2)
	assert.Equal(t, watch.Error, ev.Type)
}

// A real informer over a fake clientset (which, like a server without the
// gate, ignores shardSelector) holds only the share, and follows it when it
// changes.
func TestCacheFilterInformerFollowsTheShare(t *testing.T) {
	a, b := replicaSet("a", "uid-a"), replicaSet("b", "uid-b")
	client := fake.NewClientset(a, b)
	share := newFixedShare(only(uidHash(a.UID)))
	f := shardcr.NewCacheFilter(shardcr.New(share, shard.KeyUID), clientgoscheme.Scheme, nil).Owners(&appsv1.ReplicaSet{})
	lw := noWatchList{&toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return client.AppsV1().ReplicaSets("").List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return client.AppsV1().ReplicaSets("").Watch(ctx, opts)
		},
	}}
	inf := f.NewInformer(lw, &appsv1.ReplicaSet{}, 0, toolscache.Indexers{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()

	keys := func() []string { k := inf.GetStore().ListKeys(); slices.Sort(k); return k }
	require.Eventually(t, func() bool { return slices.Equal(keys(), []string{"ns/a"}) }, 10*time.Second, 5*time.Millisecond)

	share.set(only(uidHash(b.UID)))
	require.Eventually(t, func() bool { return slices.Equal(keys(), []string{"ns/b"}) }, 10*time.Second, 5*time.Millisecond,
		"after the share moved the store holds %v", keys)

	// Watch events follow the share too.
	c := replicaSet("c", "uid-c")
	_, err := client.AppsV1().ReplicaSets("ns").Create(ctx, c, metav1.CreateOptions{})
	require.NoError(t, err)
	share.set(shard.NewRanges(only(uidHash(b.UID))[0], only(uidHash(c.UID))[0]))
	require.Eventually(t, func() bool { return slices.Equal(keys(), []string{"ns/b", "ns/c"}) }, 10*time.Second, 5*time.Millisecond)
}

// noWatchList marks a ListerWatcher over the fake clientset, which cannot
// stream lists, as client-go's own fake informers do.
type noWatchList struct{ *toolscache.ListWatch }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// A streaming list (sendInitialEvents) is a list: it takes the share of the
// moment, and its initial events are filtered like a list's items. Later
// pages of a paginated list keep the first page's share.
func TestCacheFilterStreamingAndPagedLists(t *testing.T) {
	mine, theirs := replicaSet("mine", "uid-mine"), replicaSet("theirs", "uid-theirs")
	share := newFixedShare(only(uidHash(mine.UID)))
	filter := func(next shardcr.NewInformerFunc) *shardcr.CacheFilter {
		return shardcr.NewCacheFilter(shardcr.New(share, shard.KeyUID), clientgoscheme.Scheme, next).Children(&corev1.Pod{})
	}
	srv := &fakeServer{pods: []corev1.Pod{*podOf("a", mine), *podOf("b", theirs)}}
	lw := wrapped(t, filter, &corev1.Pod{}, srv.listWatch())

	// A stream started under another share than the last list's does not
	// expire: it is the new list.
	share.set(only(uidHash(theirs.UID)))
	w, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{SendInitialEvents: ptr.To(true)})
	require.NoError(t, err)
	defer w.Stop()
	srv.w.Add(podOf("a", mine))
	srv.w.Add(podOf("b", theirs))
	ev, _ := next(t, w)
	require.Equal(t, watch.Added, ev.Type)
	assert.Equal(t, "b", ev.Object.(*corev1.Pod).Name, "only the share's initial events pass")

	// Pages: the share moves between two pages; the second page is still
	// filtered by the first page's share.
	share.set(only(uidHash(mine.UID)))
	first, err := lw.ListWithContext(context.Background(), metav1.ListOptions{Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, names(t, first))
	share.set(only(uidHash(theirs.UID)))
	second, err := lw.ListWithContext(context.Background(), metav1.ListOptions{Limit: 1, Continue: "page-2"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, names(t, second))
}
