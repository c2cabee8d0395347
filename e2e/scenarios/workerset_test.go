package scenarios

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/examples/workerset"
)

// TestWorkerSetScale runs the WorkerSet example (custom resources owning
// custom resources, through childset's client-go driver and the dynamic
// client) on a real apiserver: a matching orphan Worker is adopted, then
// the set scales 0 -> 50 -> 5, and a sampler of both watches checks that no
// Worker is ever created or adopted beyond the replicas in force.
func TestWorkerSetScale(t *testing.T) {
	s := newScenario(t, 3*time.Minute)
	require.NoError(t, s.env.InstallCRDsFromYAML(s.ctx, workerset.CRD))
	dyn, err := dynamic.NewForConfig(s.clientConfig(nil))
	require.NoError(t, err)
	sampler := s.workerSetSampler(dyn)
	sets := dyn.Resource(workerset.SetResource).Namespace(s.ns)
	workers := dyn.Resource(workerset.WorkerResource).Namespace(s.ns)

	orphan := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"image": "worker:0"}}}
	orphan.SetGroupVersionKind(workerset.WorkerKind)
	orphan.SetName("orphan")
	orphan.SetLabels(map[string]string{"app": "pool"})
	_, err = workers.Create(s.ctx, orphan, metav1.CreateOptions{})
	require.NoError(t, err)
	set, err := sets.Create(s.ctx, workerSetObject("pool", "pool", 1), metav1.CreateOptions{})
	require.NoError(t, err)

	warnings := s.runWorkerSet()
	// Replicas 1 and a matching orphan: the orphan is adopted, nothing is
	// created.
	s.settleChildren(sampler, set.GetUID(), 1)
	got, err := workers.Get(s.ctx, "orphan", metav1.GetOptions{})
	require.NoError(t, err)
	ref := metav1.GetControllerOf(got)
	require.NotNil(t, ref, "the orphan was not adopted")
	require.Equal(t, set.GetUID(), ref.UID)
	require.Equal(t, "WorkerSet", ref.Kind)
	require.Equal(t, []string{"orphan"}, sampler.liveOf(set.GetUID()))

	start := time.Now()
	for _, n := range []int64{0, 50, 5} {
		patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)
		_, err := sets.Patch(s.ctx, "pool", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		require.NoError(t, err)
		s.settleChildren(sampler, set.GetUID(), int(n))
		list, err := workers.List(s.ctx, metav1.ListOptions{LabelSelector: "app=pool"})
		require.NoError(t, err)
		require.Len(t, list.Items, int(n), "Workers in the API after scaling to %d", n)
		for _, w := range list.Items {
			require.Equal(t, set.GetUID(), metav1.GetControllerOf(&w).UID, "Worker %s", w.GetName())
		}
	}
	r := sampler.replay()
	created := len(r.created) - 1 // the orphan was created by the test
	require.Equal(t, 50, created, "Workers created: the orphan was adopted, 0 -> 50 created 50")
	require.Empty(t, warnings.list(), "Warning events")
	t.Logf("workerset: 1 -> 0 -> 50 -> 5 in %s, %d Workers created", time.Since(start).Round(time.Millisecond), created)
}

// workerSetSampler starts a child sampler of the namespace's WorkerSets and
// Workers, read with dyn.
func (s *scenario) workerSetSampler(dyn dynamic.Interface) *childSampler {
	s.t.Helper()
	return newChildSampler(s.t, dyn, s.ns, workerset.SetResource, workerset.WorkerResource, "WorkerSet",
		func(u *unstructured.Unstructured) int64 {
			n, err := childset.NestedReplicas(u.Object, 1, "spec", "replicas")
			if err != nil {
				s.t.Errorf("WorkerSet %s: %v", u.GetName(), err)
			}
			return int64(n)
		})
}

// workerSetObject is a WorkerSet called name of replicas Workers labelled
// app=app.
func workerSetObject(name, app string, replicas int64) *unstructured.Unstructured {
	set := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{"app": app}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": app}},
				"spec":     map[string]any{"image": "worker:1"},
			},
		},
	}}
	set.SetGroupVersionKind(workerset.SetKind)
	set.SetName(name)
	return set
}

// runWorkerSet starts the WorkerSet controller on the scenario's namespace
// with the controller's (counted, audited) client. Its Warning events are
// kept in memory.
func (s *scenario) runWorkerSet() *warningRecorder {
	s.t.Helper()
	ctx, cancel := context.WithCancel(s.ctx)
	dyn, err := dynamic.NewForConfig(s.ctrlConfig)
	require.NoError(s.t, err)
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, s.ns, nil)
	rec := &warningRecorder{}
	c, err := workerset.NewController(ctx, dyn, factory, workerset.WithEventRecorder(rec))
	if err != nil {
		cancel()
		s.t.Fatalf("construct WorkerSet controller: %v", err)
	}
	factory.Start(ctx.Done())
	s.runUntilCleanup(ctx, cancel, c.Run, factory.Shutdown)
	return rec
}
