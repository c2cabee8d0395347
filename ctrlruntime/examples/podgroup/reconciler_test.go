package podgroup_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/podgroup"
)

func statusReplicas(t *testing.T, e *env, name string) int64 {
	t.Helper()
	g := podgroup.New()
	require.NoError(t, e.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, g))
	n, _, err := unstructured.NestedInt64(g.Object, "status", "replicas")
	require.NoError(t, err)
	return n
}

func TestScaleUpWaitsForItsCreations(t *testing.T) {
	e := newEnv(t, newGroup("g", 5))
	require.NoError(t, e.reconcile(t, "g"))
	pods := e.pods(t)
	require.Len(t, pods, 5)
	for _, p := range pods {
		assert.Equal(t, "g", metav1.GetControllerOf(&p).Name)
		assert.Equal(t, map[string]string{"group": "g"}, p.Labels)
	}

	// The group is scaled to 8 before the informer reported the five pods:
	// the controller must not act on the stale count.
	g := podgroup.New()
	require.NoError(t, e.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "g"}, g))
	require.NoError(t, unstructured.SetNestedField(g.Object, int64(8), "spec", "replicas"))
	require.NoError(t, e.client.Update(context.Background(), g))
	require.NoError(t, e.reconcile(t, "g"))
	assert.Len(t, e.pods(t), 5, "no pods while earlier creations are unobserved")

	e.observeAll(t)
	require.NoError(t, e.reconcile(t, "g"))
	assert.Len(t, e.pods(t), 8)
	assert.Equal(t, int64(5), statusReplicas(t, e, "g"), "status counts the pods the sync saw")
}

func TestScaleDownDeletesUpstreamsChoice(t *testing.T) {
	e := newEnv(t, newGroup("g", 3))
	require.NoError(t, e.reconcile(t, "g"))
	e.observeAll(t)
	pods := e.pods(t)
	require.Len(t, pods, 3)

	// Make two pods Running and Ready; the third stays Pending, so upstream's
	// order deletes it first.
	for _, p := range pods[:2] {
		p.Spec.NodeName = "node"
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		require.NoError(t, e.client.Update(context.Background(), &p))
	}
	pending := pods[2].Name

	g := podgroup.New()
	require.NoError(t, e.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "g"}, g))
	require.NoError(t, unstructured.SetNestedField(g.Object, int64(2), "spec", "replicas"))
	require.NoError(t, e.client.Update(context.Background(), g))
	require.NoError(t, e.reconcile(t, "g"))
	left := e.pods(t)
	require.Len(t, left, 2)
	for _, p := range left {
		assert.NotEqual(t, pending, p.Name)
	}
	assert.False(t, e.r.Tracker().Satisfied(g), "the deletion is expected until observed")
	gone := pods[2]
	e.r.Tracker().Handler().Delete(context.Background(), event.DeleteEvent{Object: &gone}, e.queue)
	assert.True(t, e.r.Tracker().Satisfied(g))
}

func TestAdoptsMatchingOrphans(t *testing.T) {
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "orphan", Labels: map[string]string{"group": "g"}}}
	e := newEnv(t, newGroup("g", 1), orphan)
	require.NoError(t, e.reconcile(t, "g"))
	pods := e.pods(t)
	require.Len(t, pods, 1, "the orphan is adopted, not duplicated")
	ref := metav1.GetControllerOf(&pods[0])
	require.NotNil(t, ref)
	assert.Equal(t, "PodGroup", ref.Kind)
	assert.Equal(t, "example.ctrlkit.io/v1alpha1", ref.APIVersion)
}

func TestBadSpecIsATerminalError(t *testing.T) {
	for name, mutate := range map[string]func(map[string]any){
		"no selector":        func(spec map[string]any) { delete(spec, "selector") },
		"empty selector":     func(spec map[string]any) { spec["selector"] = map[string]any{} },
		"malformed selector": func(spec map[string]any) { spec["selector"] = "x" },
		"bad operator": func(spec map[string]any) {
			spec["selector"] = map[string]any{"matchExpressions": []any{map[string]any{"key": "a", "operator": "Nope"}}}
		},
		"no template":  func(spec map[string]any) { delete(spec, "template") },
		"bad replicas": func(spec map[string]any) { spec["replicas"] = "three" },
		"bad template": func(spec map[string]any) { spec["template"] = map[string]any{"spec": "x"} },
	} {
		t.Run(name, func(t *testing.T) {
			g := newGroup("g", 1)
			mutate(g.Object["spec"].(map[string]any))
			e := newEnv(t, g)
			err := e.reconcile(t, "g")
			require.Error(t, err)
			assert.ErrorIs(t, err, reconcile.TerminalError(nil))
			assert.Empty(t, e.pods(t))
		})
	}
}

func TestDefaultsAndMissingGroup(t *testing.T) {
	g := newGroup("g", 0)
	delete(g.Object["spec"].(map[string]any), "replicas")
	neg := newGroup("neg", -2)
	e := newEnv(t, g, neg)
	require.NoError(t, e.reconcile(t, "g"))
	assert.Len(t, e.pods(t), 1, "a missing spec.replicas means 1")
	require.NoError(t, e.reconcile(t, "neg"))
	assert.Len(t, e.pods(t), 1, "a negative spec.replicas means 0")
	require.NoError(t, e.reconcile(t, "missing"))
}
