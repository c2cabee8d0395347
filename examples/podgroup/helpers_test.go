package podgroup_test

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ctrlkit/ctrlkit/podset"
)

// podsetStatusInput is a sync's observation of no pods.
func podsetStatusInput() podset.StatusInput { return podset.StatusInput{} }

// newGroup returns a PodGroup keeping replicas pods labelled app=name.
func newGroup(name string, replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.ctrlkit.io/v1alpha1", "kind": "PodGroup",
		"metadata": map[string]any{"name": name, "namespace": "default", "uid": name + "-uid", "generation": int64(1)},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
			},
		},
	}}
}
