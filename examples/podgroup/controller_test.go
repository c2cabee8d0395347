// These tests run the whole controller on simcluster: pods through the
// simulated cluster (with its scheduler and kubelet), PodGroups through the
// dynamic fake client.

package podgroup_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"

	"github.com/ctrlkit/ctrlkit/examples/podgroup"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// harness runs the PodGroup controller on a simulated cluster for pods and
// the dynamic fake client for PodGroups.
type harness struct {
	ctx     context.Context
	cluster *simcluster.Cluster
	dyn     *dynamicfake.FakeDynamicClient
	stop    context.CancelFunc
}

func start(t *testing.T, groups ...runtime.Object) *harness {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cluster := simcluster.New(simcluster.WithStartupDelay(5 * time.Millisecond))
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{podgroup.Resource: "PodGroupList"}, groups...)
	return &harness{ctx: ctx, cluster: cluster, dyn: dyn, stop: cancel}
}

// run starts the cluster, the informers and the controller; the cleanup
// stops them all and waits for every goroutine.
func (h *harness) run(t *testing.T) {
	t.Helper()
	groupFactory := dynamicinformer.NewDynamicSharedInformerFactory(h.dyn, 0)
	groupInformer := groupFactory.ForResource(podgroup.Resource).Informer()
	pods := informers.NewSharedInformerFactory(h.cluster.Client(), 0)
	c, err := podgroup.New(h.ctx, h.cluster.Client(), h.dyn, pods.Core().V1().Pods(), groupInformer)
	require.NoError(t, err)
	clusterDone := make(chan error, 1)
	go func() { clusterDone <- h.cluster.Run(h.ctx) }()
	pods.Start(h.ctx.Done())
	groupFactory.Start(h.ctx.Done())
	done := make(chan error, 1)
	go func() { done <- c.Run(h.ctx) }()
	t.Cleanup(func() {
		h.stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
		if err := <-clusterDone; err != nil {
			t.Errorf("simulated cluster: %v", err)
		}
		pods.Shutdown()
		groupFactory.Shutdown()
	})
}

func (h *harness) pods(t *testing.T, selector string) []v1.Pod {
	t.Helper()
	list, err := h.cluster.Client().CoreV1().Pods("default").List(h.ctx, metav1.ListOptions{LabelSelector: selector})
	require.NoError(t, err)
	return list.Items
}

func (h *harness) group(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	pg, err := h.dyn.Resource(podgroup.Resource).Namespace("default").Get(h.ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	return pg
}

func (h *harness) scale(t *testing.T, name string, replicas int64) {
	t.Helper()
	pg := h.group(t, name)
	require.NoError(t, unstructured.SetNestedField(pg.Object, replicas, "spec", "replicas"))
	pg.SetGeneration(pg.GetGeneration() + 1)
	_, err := h.dyn.Resource(podgroup.Resource).Namespace("default").Update(h.ctx, pg, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// waitStatus waits until the PodGroup's status reports want ready replicas
// out of want, for its current generation, and as many pods exist.
func (h *harness) waitStatus(t *testing.T, name string, want int64) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		pg, err := h.dyn.Resource(podgroup.Resource).Namespace("default").Get(h.ctx, name, metav1.GetOptions{})
		if !assert.NoError(c, err) {
			return
		}
		st, _, _ := unstructured.NestedMap(pg.Object, "status")
		gen, _, _ := unstructured.NestedInt64(pg.Object, "status", "observedGeneration")
		assert.Equal(c, want, st["replicas"], "status.replicas")
		assert.Equal(c, want, st["readyReplicas"], "status.readyReplicas")
		assert.Equal(c, want, st["availableReplicas"], "status.availableReplicas")
		assert.Equal(c, want, st["fullyLabeledReplicas"], "status.fullyLabeledReplicas")
		assert.Equal(c, pg.GetGeneration(), gen, "status.observedGeneration")
		list, err := h.cluster.Client().CoreV1().Pods("default").List(h.ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if assert.NoError(c, err) {
			// The count, not the list: printing pods on every failed poll
			// would flood the log.
			assert.Equal(c, int(want), len(list.Items), "pods")
		}
	}, 20*time.Second, 20*time.Millisecond)
}

func TestScaleUpAndDownWritesStatus(t *testing.T) {
	h := start(t, newGroup("web", 0))
	h.run(t)
	h.waitStatus(t, "web", 0)

	h.scale(t, "web", 50)
	h.waitStatus(t, "web", 50)
	for _, p := range h.pods(t, "app=web") {
		ref := metav1.GetControllerOf(&p)
		require.NotNil(t, ref, "pod %s has no controllerRef", p.Name)
		require.Equal(t, "PodGroup", ref.Kind)
		require.Equal(t, "example.ctrlkit.io/v1alpha1", ref.APIVersion)
		require.EqualValues(t, "web-uid", ref.UID)
	}
	created := countActions(h.cluster, "create")
	require.Equal(t, 50, created, "pod creates for 0 -> 50")

	h.scale(t, "web", 5)
	h.waitStatus(t, "web", 5)
	require.Equal(t, 45, countActions(h.cluster, "delete"), "pod deletes for 50 -> 5")
	require.Equal(t, created, countActions(h.cluster, "create"), "no pod created on the way down")
}

func TestAdoptsOrphan(t *testing.T) {
	h := start(t, newGroup("db", 2))
	orphan := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: "default", Labels: map[string]string{"app": "db"}},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "nginx"}}},
	}
	require.NoError(t, h.cluster.Add(orphan))
	h.run(t)
	h.waitStatus(t, "db", 2)

	got, err := h.cluster.Client().CoreV1().Pods("default").Get(h.ctx, "orphan", metav1.GetOptions{})
	require.NoError(t, err)
	ref := metav1.GetControllerOf(got)
	require.NotNil(t, ref, "the orphan was not adopted")
	require.EqualValues(t, "db-uid", ref.UID)
	require.Equal(t, 1, countActions(h.cluster, "create"), "one pod created beside the adopted orphan")
}

// countActions counts the pod API calls of verb the cluster recorded.
func countActions(cluster *simcluster.Cluster, verb string) int {
	n := 0
	for _, a := range cluster.Client().Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == "pods" && a.GetSubresource() == "" {
			n++
		}
	}
	return n
}

// TestRefusesTemplateItsSelectorDoesNotMatch: a PodGroup of 2 whose
// template's labels its selector does not match (the CRD cannot check it)
// makes no pod and adopts no orphan. The previous code created pods,
// released them at the next sync and created again: hundreds of orphans
// within seconds.
func TestRefusesTemplateItsSelectorDoesNotMatch(t *testing.T) {
	pg := newGroup("bad", 2)
	require.NoError(t, unstructured.SetNestedStringMap(pg.Object, map[string]string{"app": "elsewhere"},
		"spec", "template", "metadata", "labels"))
	h := start(t, pg)
	orphan := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: "default", Labels: map[string]string{"app": "bad"}},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "nginx"}}},
	}
	require.NoError(t, h.cluster.Add(orphan))
	h.run(t)
	// The refusal still writes the status: wait for it, then give a
	// create loop time to show.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		gen, found, _ := unstructured.NestedInt64(h.group(t, "bad").Object, "status", "observedGeneration")
		assert.True(c, found, "status written")
		assert.EqualValues(c, 1, gen)
	}, 10*time.Second, 10*time.Millisecond)
	time.Sleep(500 * time.Millisecond)
	assert.Zero(t, countActions(h.cluster, "create"), "pods created")
	assert.Zero(t, countActions(h.cluster, "patch"), "pods adopted or released")
	got, err := h.cluster.Client().CoreV1().Pods("default").Get(h.ctx, "orphan", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Nil(t, metav1.GetControllerOf(got), "the orphan was adopted")
}
