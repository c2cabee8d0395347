package simcluster

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateOwnerReferences refuses what a real apiserver's metadata validation
// refuses about owner references and controllers rely on: more than one
// reference with controller set to true. An object may have a single
// controller, and adoption and orphaning logic is built on that; a simulated
// store that kept two would let a test pass on a state no cluster can reach.
// The error is the apiserver's: 422 Invalid on metadata.ownerReferences.
func validateOwnerReferences(s *runtime.Scheme, obj runtime.Object, m metav1.Object, gvr schema.GroupVersionResource) error {
	refs := m.GetOwnerReferences()
	first := ""
	for _, ref := range refs {
		if ref.Controller == nil || !*ref.Controller {
			continue
		}
		this := ref.Kind + "/" + ref.Name
		if first == "" {
			first = this
			continue
		}
		detail := fmt.Sprintf("Only one reference can have Controller set to true. Found \"true\" in references for %s and %s", first, this)
		return apierrors.NewInvalid(groupKindOf(s, obj, gvr), m.GetName(), field.ErrorList{
			field.Invalid(field.NewPath("metadata", "ownerReferences"), refs, detail),
		})
	}
	return nil
}

// groupKindOf names obj's kind for an error: from the cluster's scheme for
// the types it knows, else from the object's own type metadata, else from
// the resource it was written to.
func groupKindOf(s *runtime.Scheme, obj runtime.Object, gvr schema.GroupVersionResource) schema.GroupKind {
	if gvks, _, err := s.ObjectKinds(obj); err == nil && len(gvks) > 0 {
		return gvks[0].GroupKind()
	}
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		return gvk.GroupKind()
	}
	return schema.GroupKind{Group: gvr.Group, Kind: gvr.Resource}
}
