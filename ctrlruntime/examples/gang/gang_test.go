package gang_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/gang"
	"github.com/ctrlkit/ctrlkit/podset"
)

// fixture is a Gang "g" over controller-runtime's fake client with the
// reconciler the manager would run (indexed names, as SetupWithManager
// sets them).
type fixture struct {
	c    client.Client
	core *childset.Reconciler[*gang.Gang, *corev1.Pod]
	r    *childsetcr.Reconciler[*gang.Gang, *corev1.Pod]
}

func newFixture(t *testing.T, replicas int32) fixture {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, gang.AddToScheme(scheme))
	g := &gang.Gang{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g", UID: "g-uid"},
		Spec: gang.GangSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"gang": "g"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"gang": "g"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "rank", Image: "trainer:1"}}},
			},
		},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(g).WithStatusSubresource(&gang.Gang{}, &corev1.Pod{}).
		WithIndex(&corev1.Pod{}, childsetcr.ControllerField, childsetcr.IndexByController).Build()
	core, err := childsetcr.NewCore(c, nil, nil, gang.GangAdapter{}, podset.PodReadiness{}, childset.WithIndexedNames(nil))
	require.NoError(t, err)
	return fixture{c: c, core: core, r: childsetcr.NewReconciler(core)}
}

// sync reconciles the gang, then observes the pods it created and deleted
// as the child handler would, so the next sync is not held back by
// expectations.
func (f fixture) sync(t *testing.T) {
	t.Helper()
	before := f.list(t)
	_, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "g"}})
	require.NoError(t, err)
	after := f.list(t)
	for name, p := range after {
		if _, existed := before[name]; !existed {
			f.core.ObserveAdd(p)
		}
	}
	for name, p := range before {
		if _, exists := after[name]; !exists {
			f.core.ObserveDelete(p, false)
		}
	}
}

func (f fixture) list(t *testing.T) map[string]*corev1.Pod {
	t.Helper()
	pods := &corev1.PodList{}
	require.NoError(t, f.c.List(context.Background(), pods, client.InNamespace("ns")))
	out := map[string]*corev1.Pod{}
	for i := range pods.Items {
		out[pods.Items[i].Name] = &pods.Items[i]
	}
	return out
}

func (f fixture) scale(t *testing.T, replicas int32) {
	t.Helper()
	g := &gang.Gang{}
	require.NoError(t, f.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "g"}, g))
	g.Spec.Replicas = ptr.To(replicas)
	require.NoError(t, f.c.Update(context.Background(), g))
}

// The pods, sorted by name, with their index labels.
func (f fixture) pods(t *testing.T) (names, indices []string) {
	t.Helper()
	pods := &corev1.PodList{}
	require.NoError(t, f.c.List(context.Background(), pods, client.InNamespace("ns")))
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	for _, p := range pods.Items {
		names = append(names, p.Name)
		indices = append(indices, p.Labels[childset.IndexLabel])
		assert.Equal(t, types.UID("g-uid"), metav1.GetControllerOf(&p).UID)
		assert.Equal(t, "trainer:1", p.Spec.Containers[0].Image)
	}
	return names, indices
}

// 0 -> 3 creates g-0..g-2; 3 -> 1 deletes the highest indices first; 1 ->
// 2 fills the lowest missing index again.
func TestGangIndexedScale(t *testing.T) {
	f := newFixture(t, 0)
	f.sync(t)
	names, _ := f.pods(t)
	assert.Empty(t, names)

	f.scale(t, 3)
	f.sync(t)
	names, indices := f.pods(t)
	assert.Equal(t, []string{"g-0", "g-1", "g-2"}, names)
	assert.Equal(t, []string{"0", "1", "2"}, indices)

	f.scale(t, 1)
	f.sync(t)
	names, _ = f.pods(t)
	assert.Equal(t, []string{"g-0"}, names, "g-2 and g-1 go, g-0 stays")

	f.scale(t, 2)
	f.sync(t)
	names, indices = f.pods(t)
	assert.Equal(t, []string{"g-0", "g-1"}, names)
	assert.Equal(t, []string{"0", "1"}, indices)
}

// A pod that holds a wanted name but that the gang does not control (and
// does not match) is never duplicated: the gang creates the other indices.
func TestGangNameHeldByForeignPod(t *testing.T) {
	f := newFixture(t, 2)
	foreign := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g-1", Labels: map[string]string{"other": "x"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "trainer:1"}}}}
	require.NoError(t, f.c.Create(context.Background(), foreign))
	_, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "g"}})
	require.NoError(t, err)
	pods := &corev1.PodList{}
	require.NoError(t, f.c.List(context.Background(), pods, client.InNamespace("ns")))
	owned := 0
	for _, p := range pods.Items {
		if metav1.GetControllerOf(&p) != nil {
			owned++
			assert.Equal(t, "g-0", p.Name)
		}
	}
	assert.Equal(t, 1, owned)
}

// DeepCopy copies the status conditions: childset writes the status on a
// copy and compares it with the cached Gang, which must stay as it was.
func TestGangDeepCopyCopiesConditions(t *testing.T) {
	g := &gang.Gang{Status: gang.GangStatus{Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing}}}}
	cp := g.DeepCopyObject().(*gang.Gang)
	cp.Status.Conditions[0].Reason = "Changed"
	assert.Empty(t, g.Status.Conditions[0].Reason)
}
