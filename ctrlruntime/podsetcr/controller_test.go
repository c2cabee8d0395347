package podsetcr

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
	"github.com/ctrlkit/ctrlkit/examples/podgroup"
	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// newManager builds a manager that contacts no API server until started.
func newManager(t *testing.T, s *runtime.Scheme) ctrl.Manager {
	t.Helper()
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	require.NoError(t, err)
	return mgr
}

func TestCompleteAddsALeaderElectedRunnable(t *testing.T) {
	s := newScheme(t)
	c, err := NewControllerManagedBy[*unstructured.Unstructured](newManager(t, s), podgroup.Kind{}).Complete()
	require.NoError(t, err)
	assert.Equal(t, "podgroup", c.Name(), "named after the kind by default")
	assert.True(t, c.NeedLeaderElection())
	assert.Nil(t, c.Core(), "nothing is built before the manager starts it")
	assert.Error(t, c.ReadyzCheck(nil), "not ready before it runs")

	named, err := NewControllerManagedBy[*appsv1.ReplicaSet](newManager(t, s), replicaSetDescriber{}).Named("my-rs").Complete()
	require.NoError(t, err)
	assert.Equal(t, "my-rs", named.Name())

	// A Kind of the user's own replaces the one made from the describer.
	crClient := fake.NewClientBuilder().WithScheme(s).Build()
	own, err := NewKind[*unstructured.Unstructured](podgroup.Kind{}, crClient, crClient, crClient, s)
	require.NoError(t, err)
	withKind, err := NewControllerManagedBy[*unstructured.Unstructured](newManager(t, s), nil).WithKind(own).Complete()
	require.NoError(t, err)
	assert.Same(t, own, withKind.kind)
}

func TestCompleteRejectsWhatItCannotUse(t *testing.T) {
	_, err := NewControllerManagedBy[*unstructured.Unstructured](newManager(t, newScheme(t)), nil).Complete()
	assert.Error(t, err, "no describer")
	_, err = NewControllerManagedBy[*appsv1.ReplicaSet](newManager(t, runtime.NewScheme()), replicaSetDescriber{}).Complete()
	assert.ErrorContains(t, err, "not in the scheme")
}

func TestStartRefusesAnInformerThatIsNotShared(t *testing.T) {
	s := newScheme(t)
	cache := wrappingCache{&informertest.FakeInformers{Scheme: s}}
	c := &Controller[*unstructured.Unstructured]{name: "podgroup", owner: newGroup("", 0), cache: cache}
	err := c.Start(context.Background())
	assert.ErrorContains(t, err, "not a client-go SharedIndexInformer")
	assert.Error(t, c.Start(context.Background()), "Start runs once")
}

// Start builds podset on the informers the cache hands out and runs it: a
// PodGroup of 3 gets 3 pods, created through the controller-runtime client
// (the pod informer here never sees them, so expectations hold any further
// creation back), the queue reports to the metrics provider under
// the controller's name, and cancelling stops it.
func TestStartRunsPodsetOnTheCacheInformers(t *testing.T) {
	s := newScheme(t)
	group := newGroup("web", 3)
	cluster := simcluster.New(simcluster.WithScheduler(false), simcluster.WithKubelet(false))
	pods := informers.NewSharedInformerFactory(cluster.Client(), 0)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{podgroup.Resource: "PodGroupList"}, group.DeepCopy())
	groups := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	cache := &informertest.FakeInformers{Scheme: s, InformersByGVK: map[schema.GroupVersionKind]toolscache.SharedIndexInformer{
		corev1.SchemeGroupVersion.WithKind("Pod"): pods.Core().V1().Pods().Informer(),
		podGroupGVK: groups.ForResource(podgroup.Resource).Informer(),
	}}
	crClient := fake.NewClientBuilder().WithScheme(s).WithObjects(group).WithStatusSubresource(newGroup("", 0)).Build()
	kind, err := NewKind[*unstructured.Unstructured](podgroup.Kind{}, crClient, crClient, crClient, s)
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	metrics, err := ctrlruntime.NewMetricsProvider(reg)
	require.NoError(t, err)
	c := &Controller[*unstructured.Unstructured]{
		name: "podgroup", kind: kind, owner: newGroup("", 0), cache: cache,
		client: crClient, recorder: record.NewFakeRecorder(100),
		opts: []podset.Option{
			podset.WithNames("podgroup", "podgroup"),
			podset.WithMetricsProvider(metrics),
			podset.WithEventRecorder(record.NewFakeRecorder(100)),
		},
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	require.Eventually(t, func() bool { return c.Core() != nil }, 10*time.Second, 10*time.Millisecond)
	pods.Start(ctx.Done())
	groups.Start(ctx.Done())
	defer func() { // informers stop once ctx is cancelled, also on a failure
		cancel()
		pods.Shutdown()
		groups.Shutdown()
	}()

	require.Eventually(t, func() bool {
		list := &corev1.PodList{}
		return crClient.List(ctx, list, client.InNamespace("ns")) == nil && len(list.Items) == 3
	}, 10*time.Second, 10*time.Millisecond, "three pods for a PodGroup of three, through the controller-runtime client")
	require.Eventually(t, func() bool { return c.ReadyzCheck(nil) == nil }, 10*time.Second, 10*time.Millisecond)

	adds, err := reg.Gather()
	require.NoError(t, err)
	var added, depth bool
	for _, mf := range adds {
		for _, m := range mf.GetMetric() {
			if labelValue(m.GetLabel(), "name") != "podgroup" {
				continue
			}
			switch mf.GetName() {
			case "workqueue_adds_total":
				added = added || m.GetCounter().GetValue() > 0
			case "workqueue_depth":
				depth = true
			}
		}
	}
	assert.True(t, added, "workqueue_adds_total{name=podgroup} counted the queue's adds")
	assert.True(t, depth, "workqueue_depth{name=podgroup} is reported")

	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return after its context was cancelled")
	}
	assert.Error(t, c.ReadyzCheck(nil), "not ready once stopped")
}

func labelValue[L interface {
	GetName() string
	GetValue() string
}](labels []L, name string) string {
	for _, l := range labels {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// wrappingCache hands out its informers wrapped, as a multi-namespace cache
// does: they are controller-runtime Informers but not SharedIndexInformers.
type wrappingCache struct{ *informertest.FakeInformers }

func (w wrappingCache) GetInformer(ctx context.Context, obj client.Object, opts ...crcache.InformerGetOption) (crcache.Informer, error) {
	inf, err := w.FakeInformers.GetInformer(ctx, obj, opts...)
	return wrappedInformer{inf}, err
}

type wrappedInformer struct{ crcache.Informer }
