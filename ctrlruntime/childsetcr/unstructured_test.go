package childsetcr_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
)

var groupGVK = schema.GroupVersionKind{Group: "example.ctrlkit.io", Version: "v1", Kind: "Group"}

// groupSpec is an owner adapter over unstructured owners: a custom resource
// with no Go type.
type groupSpec struct{}

func (groupSpec) GroupVersionKind() schema.GroupVersionKind { return groupGVK }
func (groupSpec) Replicas(g *unstructured.Unstructured) int32 {
	n, _, _ := unstructured.NestedInt64(g.Object, "spec", "replicas")
	return int32(n)
}
func (groupSpec) Selector(g *unstructured.Unstructured) (labels.Selector, error) {
	app, _, _ := unstructured.NestedString(g.Object, "spec", "app")
	return labels.SelectorFromSet(labels.Set{"app": app}), nil
}
func (groupSpec) NewChild(g *unstructured.Unstructured) (*corev1.Pod, error) {
	app, _, _ := unstructured.NestedString(g.Object, "spec", "app")
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}}}, nil
}

// Owners may be unstructured: the core reads them through the client with
// their kind, and the orphan handler lists them.
func TestUnstructuredOwner(t *testing.T) {
	ctx := context.Background()
	s := newScheme(t)
	s.AddKnownTypeWithName(groupGVK, &unstructured.Unstructured{})
	s.AddKnownTypeWithName(groupGVK.GroupVersion().WithKind("GroupList"), &unstructured.UnstructuredList{})
	group := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": int64(2), "app": "web"}}}
	group.SetGroupVersionKind(groupGVK)
	group.SetNamespace("ns")
	group.SetName("g")
	group.SetUID("g-uid")
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(group).
		WithIndex(&corev1.Pod{}, childsetcr.ControllerField, childsetcr.IndexByController).Build()

	core, err := childsetcr.NewCore(c, nil, nil, groupSpec{}, podKind{})
	require.NoError(t, err)
	_, err = childsetcr.NewReconciler(core).Reconcile(ctx, request("g"))
	require.NoError(t, err)
	pods := &corev1.PodList{}
	require.NoError(t, c.List(ctx, pods, client.InNamespace("ns")))
	require.Len(t, pods.Items, 2)
	ref := metav1.GetControllerOf(&pods.Items[0])
	require.NotNil(t, ref)
	assert.Equal(t, "Group", ref.Kind)
	assert.Equal(t, "example.ctrlkit.io/v1", ref.APIVersion)

	h := childsetcr.NewChildHandler(core)
	q := newQueue(t)
	h.Create(ctx, event.CreateEvent{Object: pod("ns", "o", "1", "web", nil, "")}, q)
	assert.Equal(t, map[string]int{"ns/g": 0}, drain(t, q))

	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"}})
	require.NoError(t, err)
	_, err = childsetcr.SetupWithManager[*unstructured.Unstructured, *corev1.Pod](mgr, groupSpec{}, podKind{}, childsetcr.WithName("setup-unstructured"))
	require.NoError(t, err)
}
