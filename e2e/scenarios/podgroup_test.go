package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"

	"github.com/ctrlkit/ctrlkit/examples/podgroup"
)

// TestPodGroupScaleAdoptStatus runs the PodGroup example on a real apiserver
// with its CRD installed: an orphan matching the selector is adopted, the
// group scales 0 -> 50 -> 5 without ever holding more active pods than asked
// for, and status follows.
func TestPodGroupScaleAdoptStatus(t *testing.T) {
	s := newScenario(t, 5*time.Minute)
	require.NoError(t, env.InstallCRDsFromYAML(s.ctx, podgroup.CRD))
	dyn, err := dynamic.NewForConfig(s.clientConfig(nil))
	require.NoError(t, err)
	groups := dyn.Resource(podgroup.Resource).Namespace(s.ns)

	labels := map[string]string{"app": "pg"}
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Labels: labels}, Spec: podTemplate(labels).Spec}
	_, err = s.client.CoreV1().Pods(s.ns).Create(s.ctx, orphan, metav1.CreateOptions{})
	require.NoError(t, err)
	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ptrTemplate(labels))
	require.NoError(t, err)
	pg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": podgroup.Resource.GroupVersion().String(), "kind": "PodGroup",
		"metadata": map[string]any{"name": "pg"},
		"spec": map[string]any{
			"replicas": int64(1),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "pg"}},
			"template": tmpl,
		},
	}}
	created, err := groups.Create(s.ctx, pg, metav1.CreateOptions{})
	require.NoError(t, err)

	rec := s.recordPods("app=pg")
	s.runPodGroup(dyn)
	s.waitGroup(groups, "pg", 1)
	got, err := s.client.CoreV1().Pods(s.ns).Get(s.ctx, "orphan", metav1.GetOptions{})
	require.NoError(t, err)
	ref := metav1.GetControllerOf(got)
	require.NotNil(t, ref, "orphan not adopted")
	require.Equal(t, created.GetUID(), ref.UID)

	for _, step := range []int64{0, 50, 5} {
		cur, err := groups.Get(s.ctx, "pg", metav1.GetOptions{})
		require.NoError(t, err)
		require.NoError(t, unstructured.SetNestedField(cur.Object, step, "spec", "replicas"))
		_, err = groups.Update(s.ctx, cur, metav1.UpdateOptions{})
		require.NoError(t, err)
		s.waitGroup(groups, "pg", step)
		h := s.settle(rec, 2*time.Second)
		require.Equal(t, int(step), h.Active, "active pods after scaling to %d", step)
	}
	h := rec.snapshot()
	require.LessOrEqual(t, h.MaxActive, 50, "active pods never exceed the largest size asked for")
	require.Equal(t, 50, h.Created, "pods created: the orphan was adopted, the 0 -> 50 step created 50")
	t.Logf("podgroup: created %d, deleted %d, max active %d", h.Created, h.Deleted, h.MaxActive)
}

func ptrTemplate(labels map[string]string) *corev1.PodTemplateSpec {
	t := podTemplate(labels)
	return &t
}

// runPodGroup starts the PodGroup controller on the scenario's namespace.
func (s *scenario) runPodGroup(dyn dynamic.Interface) {
	s.t.Helper()
	ctx, cancel := context.WithCancel(s.ctx)
	pods := informers.NewSharedInformerFactoryWithOptions(s.ctrlClient, 0, informers.WithNamespace(s.ns))
	groups := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, s.ns, nil)
	c, err := podgroup.New(ctx, s.ctrlClient, dyn, pods.Core().V1().Pods(), groups.ForResource(podgroup.Resource).Informer())
	if err != nil {
		cancel()
		s.t.Fatalf("construct PodGroup controller: %v", err)
	}
	pods.Start(ctx.Done())
	groups.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	s.t.Cleanup(func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				s.t.Errorf("PodGroup controller Run: %v", err)
			}
			pods.Shutdown()
			groups.Shutdown()
		})
	})
}

// waitGroup waits until the PodGroup's status reports want replicas for its
// current generation.
func (s *scenario) waitGroup(groups dynamic.ResourceInterface, name string, want int64) {
	s.t.Helper()
	s.eventually(time.Minute, fmt.Sprintf("PodGroup status.replicas=%d", want), func() (bool, string) {
		pg, err := groups.Get(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		n, _, _ := unstructured.NestedInt64(pg.Object, "status", "replicas")
		gen, _, _ := unstructured.NestedInt64(pg.Object, "status", "observedGeneration")
		return n == want && gen == pg.GetGeneration(), fmt.Sprintf("status %v, generation %d", pg.Object["status"], pg.GetGeneration())
	})
}
