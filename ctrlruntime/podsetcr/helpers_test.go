package podsetcr

import (
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlkit/ctrlkit/examples/podgroup"
	"github.com/ctrlkit/ctrlkit/podset"
)

var podGroupGVK = podgroup.Kind{}.GroupVersionKind()

// newScheme has client-go's types and PodGroup as unstructured content.
func newScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	s.AddKnownTypeWithName(podGroupGVK, &unstructured.Unstructured{})
	s.AddKnownTypeWithName(podGroupGVK.GroupVersion().WithKind("PodGroupList"), &unstructured.UnstructuredList{})
	metav1.AddToGroupVersion(s, podGroupGVK.GroupVersion())
	return s
}

// newGroup is a PodGroup keeping replicas pods labelled app=name.
func newGroup(name string, replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": podGroupGVK.GroupVersion().String(), "kind": podGroupGVK.Kind,
		"metadata": map[string]any{"name": name, "namespace": "ns", "uid": name + "-uid", "generation": int64(1)},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "img"}}},
			},
		},
	}}
}

// replicaSetDescriber describes apps/v1 ReplicaSets, a typed owner.
type replicaSetDescriber struct{}

func (replicaSetDescriber) GroupVersionKind() schema.GroupVersionKind {
	return appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
}

func (replicaSetDescriber) Replicas(rs *appsv1.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}

func (replicaSetDescriber) Selector(rs *appsv1.ReplicaSet) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(rs.Spec.Selector)
}

func (replicaSetDescriber) Template(rs *appsv1.ReplicaSet) *corev1.PodTemplateSpec {
	return &rs.Spec.Template
}

func (replicaSetDescriber) MinReadySeconds(rs *appsv1.ReplicaSet) int32 {
	return rs.Spec.MinReadySeconds
}

func (replicaSetDescriber) SetStatus(rs *appsv1.ReplicaSet, in podset.StatusInput) {
	c := in.Counts()
	rs.Status.Replicas = c.Replicas
	rs.Status.ReadyReplicas = c.ReadyReplicas
	rs.Status.ObservedGeneration = rs.Generation
}
