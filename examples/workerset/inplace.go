package workerset

import (
	"encoding/json"
	"maps"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/childset"
)

// This file is the code a user adds to rolling.go for in-place updates:
// RollingSet's UpdateStrategy (childset.UpdateStrategySpec) and Workers'
// InPlaceUpdate and InPlaceDone (childset.InPlaceKind). doc.go states its
// size.
//
// A Worker moves to another image in place: spec.image is patched, and the
// Worker is unavailable until its agent reports that image running
// (status.image; an agent that reports none is taken at its word at once).
// Any other change of the template recreates it, or under InPlaceOnly
// leaves it.

// UpdateStrategy reads spec.strategy.type; absent or unknown is Recreate.
func (RollingSet) UpdateStrategy(set *unstructured.Unstructured) childset.UpdateStrategy {
	s, _, _ := unstructured.NestedString(set.Object, "spec", "strategy", "type")
	return childset.UpdateStrategy(s)
}

// InPlaceUpdate merge-patches spec.image when nothing else of the
// template differs: spec is free-form, so the rest of it is compared
// whole.
func (Workers) InPlaceUpdate(from, to *unstructured.Unstructured) ([]childset.InPlacePatch, bool) {
	fromSpec, _, _ := unstructured.NestedFieldNoCopy(from.Object, "spec")
	toSpec, _, _ := unstructured.NestedFieldNoCopy(to.Object, "spec")
	fromRest, toRest := withoutImage(fromSpec), withoutImage(toSpec)
	if fromRest == nil || toRest == nil || !equality.Semantic.DeepEqual(fromRest, toRest) ||
		!maps.Equal(from.GetLabels(), to.GetLabels()) || !maps.Equal(from.GetAnnotations(), to.GetAnnotations()) {
		return nil, false
	}
	// An image the new template drops is removed: null in a merge patch.
	image, _, _ := unstructured.NestedFieldNoCopy(to.Object, "spec", "image")
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"image": image}})
	return []childset.InPlacePatch{{Type: types.MergePatchType, Data: patch}}, err == nil
}

// InPlaceDone reports whether the agent runs the Worker's spec.image.
func (Workers) InPlaceDone(worker *unstructured.Unstructured) bool {
	runs, _, _ := unstructured.NestedString(worker.Object, "status", "image")
	want, _, _ := unstructured.NestedString(worker.Object, "spec", "image")
	return runs == "" || runs == want
}

// withoutImage is a Worker spec with its image left out, or nil when spec
// is not an object: such a template cannot be compared, so it is
// recreated.
func withoutImage(spec any) map[string]any {
	m, ok := spec.(map[string]any)
	if !ok {
		if spec == nil {
			return map[string]any{}
		}
		return nil
	}
	out := maps.Clone(m)
	delete(out, "image")
	return out
}
