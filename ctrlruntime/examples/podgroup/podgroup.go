package podgroup

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersionKind is the PodGroup kind of crd.yaml.
var GroupVersionKind = schema.GroupVersionKind{Group: "example.ctrlkit.io", Version: "v1alpha1", Kind: "PodGroup"}

// AddToScheme registers PodGroup and PodGroupList as unstructured content.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypeWithName(GroupVersionKind, &unstructured.Unstructured{})
	s.AddKnownTypeWithName(GroupVersionKind.GroupVersion().WithKind("PodGroupList"), &unstructured.UnstructuredList{})
	metav1.AddToGroupVersion(s, GroupVersionKind.GroupVersion())
	return nil
}

// New returns an empty PodGroup object, for Get and For.
func New() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(GroupVersionKind)
	return u
}

// spec is what Reconcile reads from a PodGroup.
type spec struct {
	replicas int
	selector labels.Selector
	template *corev1.PodTemplateSpec
}

var errInvalidSpec = errors.New("invalid PodGroup spec")

// parseSpec reads a PodGroup's spec. A missing replicas means 1, as for
// ReplicaSets; a negative one means 0. A missing, empty or malformed
// selector, or a malformed template, is an error wrapping errInvalidSpec.
func parseSpec(u *unstructured.Unstructured) (spec, error) {
	var s spec
	replicas, found, err := unstructured.NestedInt64(u.Object, "spec", "replicas")
	switch {
	case err != nil:
		return s, fmt.Errorf("%w: spec.replicas: %w", errInvalidSpec, err)
	case !found:
		s.replicas = 1
	default:
		s.replicas = int(max(replicas, 0))
	}

	rawSel, found, err := unstructured.NestedMap(u.Object, "spec", "selector")
	if err != nil || !found {
		return s, fmt.Errorf("%w: spec.selector missing or malformed", errInvalidSpec)
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(rawSel, &ls); err != nil {
		return s, fmt.Errorf("%w: spec.selector: %w", errInvalidSpec, err)
	}
	if s.selector, err = metav1.LabelSelectorAsSelector(&ls); err != nil {
		return s, fmt.Errorf("%w: spec.selector: %w", errInvalidSpec, err)
	}
	if s.selector.Empty() {
		return s, fmt.Errorf("%w: an empty spec.selector would select every pod", errInvalidSpec)
	}

	rawTemplate, found, err := unstructured.NestedMap(u.Object, "spec", "template")
	if err != nil || !found {
		return s, fmt.Errorf("%w: spec.template missing or malformed", errInvalidSpec)
	}
	s.template = &corev1.PodTemplateSpec{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(rawTemplate, s.template); err != nil {
		return s, fmt.Errorf("%w: spec.template: %w", errInvalidSpec, err)
	}
	return s, nil
}
