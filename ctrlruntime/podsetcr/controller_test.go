package podsetcr

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
	"github.com/ctrlkit/ctrlkit/examples/podgroup"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/podcontrol"
	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// staticMapper maps every kind of s to a namespaced resource, so the
// manager needs no discovery.
func staticMapper(s *runtime.Scheme) meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for gvk := range s.AllKnownTypes() {
		m.Add(gvk, meta.RESTScopeNamespace)
	}
	return m
}

// newManager builds a manager that contacts no API server until started.
func newManager(t *testing.T, s *runtime.Scheme) ctrl.Manager {
	t.Helper()
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		MapperProvider: func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return staticMapper(s), nil },
	})
	require.NoError(t, err)
	return mgr
}

func TestCompleteRegistersAReconciler(t *testing.T) {
	s := newScheme(t)
	c, err := SetupWithManager[*unstructured.Unstructured](newManager(t, s), podgroup.Kind{})
	require.NoError(t, err)
	assert.Equal(t, "podgroup", c.Name(), "named after the kind by default")
	require.NotNil(t, c.Core(), "the core is built at registration")
	assert.Error(t, c.ReadyzCheck(nil), "not ready before the cache has synced")

	named, err := SetupWithManager[*appsv1.ReplicaSet](newManager(t, s), replicaSetDescriber{}, WithName("my-rs"))
	require.NoError(t, err)
	assert.Equal(t, "my-rs", named.Name())

	// A Kind of the user's own replaces the one made from the describer.
	crClient := fake.NewClientBuilder().WithScheme(s).Build()
	own, err := NewKind[*unstructured.Unstructured](podgroup.Kind{}, crClient, crClient, crClient, s)
	require.NoError(t, err)
	_, err = SetupWithManager[*unstructured.Unstructured](newManager(t, s), nil, WithKind(own), WithName("own"))
	require.NoError(t, err)
}

func TestCompleteRejectsWhatItCannotUse(t *testing.T) {
	_, err := SetupWithManager[*unstructured.Unstructured](newManager(t, newScheme(t)), nil)
	assert.Error(t, err, "no describer")
	_, err = SetupWithManager[*appsv1.ReplicaSet](newManager(t, runtime.NewScheme()), replicaSetDescriber{})
	assert.ErrorContains(t, err, "not in the scheme")
	_, err = SetupWithManager[*appsv1.ReplicaSet](newManager(t, newScheme(t)), nil, WithKind[*unstructured.Unstructured](podgroup.Kind{}))
	assert.ErrorContains(t, err, "WithKind: a podgroup.Kind, not a podset.Kind for *v1.ReplicaSet")
	// controller-runtime runs the queue and the workers: an option of
	// podset's own driver would be ignored, so it is refused, as a
	// programmer error.
	assert.PanicsWithValue(t, "podset: NewReconciler: WithUnreachableBackoffCap, WithDrainTimeout configure New's driver, not the core; set the host's own equivalents", func() {
		_, _ = SetupWithManager[*unstructured.Unstructured](newManager(t, newScheme(t)), podgroup.Kind{},
			WithPodSetOptions(podset.WithUnreachableBackoffCap(time.Second), podset.WithDrainTimeout(0)))
	})
}

func TestInformerForTellsAWrappedInformer(t *testing.T) {
	s := newScheme(t)
	inf, shared, err := informerFor(context.Background(), wrappingCache{&informertest.FakeInformers{Scheme: s}}, newGroup("", 0))
	require.NoError(t, err)
	assert.NotNil(t, inf)
	assert.Nil(t, shared, "a wrapped informer is read through the cache")
}

// A cache restricted to namespaces keeps an informer per namespace, none
// a client-go SharedIndexInformer: the core then reads through the cache.
func TestCompleteAcceptsANamespaceRestrictedCache(t *testing.T) {
	s := newScheme(t)
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		MapperProvider: func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return staticMapper(s), nil },
		Cache:          crcache.Options{DefaultNamespaces: map[string]crcache.Config{"a": {}, "b": {}}},
	})
	require.NoError(t, err)
	_, shared, err := informerFor(context.Background(), mgr.GetCache(), &corev1.Pod{})
	require.NoError(t, err)
	require.Nil(t, shared, "the test needs a cache that wraps its informers")
	c, err := SetupWithManager[*unstructured.Unstructured](mgr, podgroup.Kind{}, WithName("restricted"))
	require.NoError(t, err)
	require.NotNil(t, c.Core())
}

// podGroupRig is podset over informers of a simulated cluster (pods) and
// a dynamic fake (PodGroups), as a manager's cache would hand them out,
// with pods written to the cluster and the status to a controller-runtime
// fake; it returns the reconciler and the cluster.
func podGroupRig(t *testing.T, ctx context.Context, group *unstructured.Unstructured, opts ...podset.Option) (*Controller[*unstructured.Unstructured], *simcluster.Cluster, toolscache.Store) {
	t.Helper()
	s := newScheme(t)
	cluster := simcluster.New(simcluster.WithScheduler(false), simcluster.WithKubelet(false))
	pods := informers.NewSharedInformerFactory(cluster.Client(), 0)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{podgroup.Resource: "PodGroupList"}, group.DeepCopy())
	groups := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	podInf, groupInf := pods.Core().V1().Pods().Informer(), groups.ForResource(podgroup.Resource).Informer()
	crClient := fake.NewClientBuilder().WithScheme(s).WithObjects(group).WithStatusSubresource(newGroup("", 0)).Build()
	kind, err := NewKind[*unstructured.Unstructured](podgroup.Kind{}, crClient, crClient, crClient, s)
	require.NoError(t, err)
	core, err := podset.NewReconciler(ctx, podInformer{podInf}, groupInf, podset.Kind[*unstructured.Unstructured](kind),
		append([]podset.Option{podset.WithEventRecorder(record.NewFakeRecorder(100)),
			podset.WithPodWriter(podcontrol.ClientsetWriter(cluster.Client()))}, opts...)...)
	require.NoError(t, err)
	c := &Controller[*unstructured.Unstructured]{Reconciler: childsetcr.NewReconciler(core), name: "podgroup", hasSynced: []toolscache.InformerSynced{podInf.HasSynced, groupInf.HasSynced}}
	pods.Start(ctx.Done())
	groups.Start(ctx.Done())
	t.Cleanup(func() { pods.Shutdown(); groups.Shutdown() })
	require.Eventually(t, func() bool { return c.ReadyzCheck(nil) == nil }, 10*time.Second, 10*time.Millisecond)
	return c, cluster, podInf.GetStore()
}

// The reconciler runs podset on the informers the cache hands out: a
// PodGroup of 3 gets 3 pods; until the handlers have observed their
// creations, expectations hold any further creation back and the Result
// asks to look again when they expire. The handlers queue the owner.
func TestReconcilerRunsPodsetOnTheCacheInformers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	group := newGroup("web", 3)
	// The status goes to a store the owner informer never reads, which
	// the guard would wait for forever (the next test).
	c, cluster, podCache := podGroupRig(t, ctx, group, podset.WithReadYourWrites(nil))
	req := reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "web"}}
	res, err := c.Reconcile(ctx, req)
	require.NoError(t, err)
	assert.Zero(t, res.RequeueAfter, "nothing pending before the creations")
	list, err := cluster.Client().CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 3, "three pods for a PodGroup of three")
	pending, ok := c.Core().Expectations().Pending(expectations.OwnerKeyFor(group))
	require.True(t, ok)
	assert.EqualValues(t, 3, pending.Adds, "three creations expected")
	res, err = c.Reconcile(ctx, req)
	require.NoError(t, err)
	assert.Greater(t, res.RequeueAfter, time.Minute, "the creations are expected; look again when they expire")

	// The handler is fed the pods the API listed; the informer delivers
	// them a moment later, and the sync below lists them from its cache
	// (with the guard off, nothing waits for it): wait, as the informer's
	// own events would have come first.
	require.Eventually(t, func() bool { return len(podCache.List()) == 3 }, 10*time.Second, time.Millisecond)
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	h := childsetcr.NewChildHandler(c.Core())
	for i := range list.Items {
		h.Create(ctx, event.TypedCreateEvent[client.Object]{Object: &list.Items[i]}, q)
	}
	assert.Equal(t, 1, q.Len(), "the owner is queued once")
	got, _ := q.Get()
	assert.Equal(t, req, got)
	q.Done(got)
	res, err = c.Reconcile(ctx, req)
	require.NoError(t, err)
	assert.Zero(t, res.RequeueAfter, "every creation observed: nothing pending")
	list, err = cluster.Client().CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, list.Items, 3, "never a pod more")

	require.NoError(t, c.Core().Expectations().ExpectCreations(expectations.OwnerKeyFor(group), 1))
	childsetcr.NewOwnerHandler(c.Core()).Delete(ctx, event.TypedDeleteEvent[client.Object]{Object: group, DeleteStateUnknown: true}, q)
	_, pendingAfter := c.Core().Expectations().Pending(expectations.OwnerKeyFor(group))
	assert.False(t, pendingAfter, "a deleted owner's expectations are forgotten")
}

// An owner held by the read-your-writes guard is polled, not failed: here
// its status is written where the owner informer never catches up.
func TestReconcilerPollsAStaleCache(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, _, _ := podGroupRig(t, ctx, newGroup("web", 1))
	req := reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "web"}}
	_, err := c.Reconcile(ctx, req)
	require.NoError(t, err)
	res, err := c.Reconcile(ctx, req)
	require.NoError(t, err, "a stale cache is not a failure")
	var store any = toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
	if _, versioned := store.(consistency.SyncedResourceVersioner); !versioned {
		// client-go before v0.36: stores report no version, there is no
		// guard, and the sync runs as upstream's did before the guard.
		assert.NotEqual(t, c.Core().StaleCachePoll(), res.RequeueAfter)
		return
	}
	assert.Equal(t, c.Core().StaleCachePoll(), res.RequeueAfter)
}

// wrappingCache hands out its informers wrapped, as a multi-namespace cache
// does: they are controller-runtime Informers but not SharedIndexInformers.
type wrappingCache struct{ *informertest.FakeInformers }

func (w wrappingCache) GetInformer(ctx context.Context, obj client.Object, opts ...crcache.InformerGetOption) (crcache.Informer, error) {
	inf, err := w.FakeInformers.GetInformer(ctx, obj, opts...)
	return wrappedInformer{inf}, err
}

type wrappedInformer struct{ crcache.Informer }
