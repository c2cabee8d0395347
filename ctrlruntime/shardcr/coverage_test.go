package shardcr_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/shardcr"
	"github.com/ctrlkit/ctrlkit/shard"
)

// Each informer of a filtered cache lists again on its own when the share
// changes, so an owner can reach the cache before its children do. The
// Reconciler waits until every filtered informer has taken in a list of a
// share holding the owner: synced earlier, the owner would look childless
// and its children would be created again (seen against a real API server,
// right after a replica took over the share of one that left).
func TestReconcilerWaitsForTheCacheToCoverTheOwner(t *testing.T) {
	rs := replicaSet("a", "uid-a")
	pod := podOf("a-1", rs)
	clientset := fake.NewClientset(rs, pod)
	share := newFixedShare(only(uidHash(rs.UID)))
	sharding := shardcr.New(share, shard.KeyUID)
	filter := shardcr.NewCacheFilter(sharding, clientgoscheme.Scheme, nil).Owners(&appsv1.ReplicaSet{}).Children(&corev1.Pod{})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	owners := filter.NewInformer(noWatchList{&toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return clientset.AppsV1().ReplicaSets("").List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return clientset.AppsV1().ReplicaSets("").Watch(ctx, opts)
		},
	}}, &appsv1.ReplicaSet{}, 0, toolscache.Indexers{})
	// The children's list waits for the test.
	release := make(chan struct{})
	children := filter.NewInformer(noWatchList{&toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return clientset.CoreV1().Pods("").List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return clientset.CoreV1().Pods("").Watch(ctx, opts)
		},
	}}, &corev1.Pod{}, 0, toolscache.Indexers{})
	var wg sync.WaitGroup
	for _, inf := range []toolscache.SharedIndexInformer{owners, children} {
		wg.Go(func() { inf.RunWithContext(ctx) })
	}
	defer func() { cancel(); wg.Wait() }()

	var ran int
	inner := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		ran++
		return reconcile.Result{}, nil
	})
	reader := crfake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(rs).Build()
	r := shardcr.NewReconciler(inner, sharding, reader, func() client.Object { return &appsv1.ReplicaSet{} }, nil, nil)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}
	h := uidHash(rs.UID)

	require.True(t, toolscache.WaitForCacheSync(ctx.Done(), owners.HasSynced))
	assert.False(t, filter.Covers(h), "the children's informer has not listed yet")
	res, err := r.Reconcile(ctx, req)
	require.NoError(t, err)
	assert.Zero(t, ran, "the owner was synced before its children reached the cache")
	assert.Positive(t, res.RequeueAfter, "a reconcile put off comes back")

	close(release)
	require.True(t, toolscache.WaitForCacheSync(ctx.Done(), children.HasSynced))
	require.Eventually(t, func() bool { return filter.Covers(h) }, 10*time.Second, 5*time.Millisecond)
	assert.False(t, filter.Covers(uidHash("uid-elsewhere")), "a hash outside the share is not covered")
	res, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, 1, ran)
	assert.Zero(t, res)
}

// A streaming list (client-go's default where the server supports it)
// covers its share once its end, the bookmark of its initial events, has
// reached the store, not before.
func TestCacheFilterCoversAfterAStreamingList(t *testing.T) {
	// Streaming is client-go's default from v0.35 on; before, it is behind
	// the WatchListClient gate, turned on here so every version streams.
	prev := clientfeatures.FeatureGates()
	clientfeatures.ReplaceFeatureGates(forcedGate{Gates: prev, on: clientfeatures.WatchListClient})
	defer clientfeatures.ReplaceFeatureGates(prev)

	rs := replicaSet("a", "uid-a")
	share := newFixedShare(only(uidHash(rs.UID)))
	filter := shardcr.NewCacheFilter(shardcr.New(share, shard.KeyUID), clientgoscheme.Scheme, nil).Owners(&appsv1.ReplicaSet{})
	release := make(chan struct{})
	inf := filter.NewInformer(&toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			t.Error("the informer listed instead of streaming")
			return &appsv1.ReplicaSetList{}, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w := watch.NewFakeWithChanSize(2, false)
			if opts.SendInitialEvents == nil || !*opts.SendInitialEvents {
				return w, nil
			}
			w.Add(rs.DeepCopy())
			go func() {
				select {
				case <-release:
				case <-ctx.Done():
					return
				}
				end := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
					ResourceVersion: "10",
					Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
				}}
				w.Action(watch.Bookmark, end)
			}()
			return w, nil
		},
	}, &appsv1.ReplicaSet{}, 0, toolscache.Indexers{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()

	h := uidHash(rs.UID)
	time.Sleep(100 * time.Millisecond)
	assert.False(t, inf.HasSynced())
	assert.False(t, filter.Covers(h), "covered before the stream's end")
	close(release)
	require.True(t, toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced))
	require.Eventually(t, func() bool { return filter.Covers(h) }, 10*time.Second, 5*time.Millisecond)
}

// An informer the cache stopped (removed) serves no reads: it does not
// hold the others' coverage back, though it never listed the share.
func TestCacheFilterCoverageSkipsStoppedInformers(t *testing.T) {
	rs := replicaSet("a", "uid-a")
	share := newFixedShare(only(uidHash(rs.UID)))
	filter := shardcr.NewCacheFilter(shardcr.New(share, shard.KeyUID), clientgoscheme.Scheme, nil).Owners(&appsv1.ReplicaSet{})
	never := make(chan struct{})
	inf := filter.NewInformer(noWatchList{&toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) {
			select {
			case <-never:
			case <-ctx.Done():
			}
			return nil, ctx.Err()
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewFake(), nil
		},
	}}, &appsv1.ReplicaSet{}, 0, toolscache.Indexers{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	h := uidHash(rs.UID)
	assert.False(t, filter.Covers(h), "a running informer that has not listed")
	cancel()
	<-done
	assert.True(t, filter.Covers(h), "a stopped informer")
}

// forcedGate reports one client-go feature on and asks Gates about the rest.
type forcedGate struct {
	clientfeatures.Gates
	on clientfeatures.Feature
}

func (g forcedGate) Enabled(f clientfeatures.Feature) bool { return f == g.on || g.Gates.Enabled(f) }
