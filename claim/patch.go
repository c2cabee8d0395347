package claim

import (
	"encoding/json"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The structs below fix the JSON key order of the patch bodies, which
// upstream's tests (and the differential tests in e2e) compare byte for byte.

type adoptPatch struct {
	Metadata adoptPatchMeta `json:"metadata"`
}

type adoptPatchMeta struct {
	OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
	// UID acts as a precondition: if the object was deleted and recreated
	// under the same name, the patch fails instead of adopting the stranger.
	UID        types.UID `json:"uid"`
	Finalizers []string  `json:"finalizers,omitempty"`
}

type releasePatch struct {
	Metadata releasePatchMeta `json:"metadata"`
}

type releasePatchMeta struct {
	UID types.UID `json:"uid"`
	// Maps marshal with sorted keys, which puts "$patch" before "uid".
	OwnerReferences  []map[string]string `json:"ownerReferences"`
	DeleteFinalizers []string            `json:"$deleteFromPrimitiveList/finalizers,omitempty"`
}

// controllerRef builds the owner reference that marks controller as the
// managing controller of an object.
func controllerRef(controller metav1.Object, kind schema.GroupVersionKind) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion:         kind.GroupVersion().String(),
		Kind:               kind.Kind,
		Name:               controller.GetName(),
		UID:                controller.GetUID(),
		Controller:         &yes,
		BlockOwnerDeletion: &yes,
	}
}

// adoptStrategicMergeBytes is the strategic-merge patch that adds controller
// as the managing owner of the object with UID uid. Owner references and
// finalizers merge by key on the server, so other owners are kept.
func adoptStrategicMergeBytes(controller metav1.Object, kind schema.GroupVersionKind, uid types.UID, finalizers ...string) ([]byte, error) {
	return json.Marshal(&adoptPatch{Metadata: adoptPatchMeta{
		OwnerReferences: []metav1.OwnerReference{controllerRef(controller, kind)},
		UID:             uid,
		Finalizers:      finalizers,
	}})
}

// GenerateAdoptOwnerRefStrategicMergeBytes returns the strategic-merge patch
// that makes controller (of controllerKind) the managing owner of the object
// with dependentUID, adding finalizers when given. The dependent's UID is a
// precondition. Without finalizers the output is byte for byte the adoption
// patch of upstream's ref managers and of its ControllerRevision history.
func GenerateAdoptOwnerRefStrategicMergeBytes(controller metav1.Object, controllerKind schema.GroupVersionKind, dependentUID types.UID, finalizers ...string) ([]byte, error) {
	return adoptStrategicMergeBytes(controller, controllerKind, dependentUID, finalizers...)
}

// GenerateDeleteOwnerRefStrategicMergeBytes returns the strategic-merge patch
// that removes the owner references with ownerUIDs from the object with
// dependentUID and, when finalizers are given, removes those finalizers too.
// The dependent's UID is included as a precondition. The output is byte for
// byte what upstream produces, including "ownerReferences":null for an empty
// ownerUIDs.
func GenerateDeleteOwnerRefStrategicMergeBytes(dependentUID types.UID, ownerUIDs []types.UID, finalizers ...string) ([]byte, error) {
	var refs []map[string]string
	for _, uid := range ownerUIDs {
		refs = append(refs, map[string]string{"$patch": "delete", "uid": string(uid)})
	}
	return json.Marshal(&releasePatch{Metadata: releasePatchMeta{
		UID:              dependentUID,
		OwnerReferences:  refs,
		DeleteFinalizers: finalizers,
	}})
}

// JSON merge patches replace lists wholesale, so they carry the complete new
// ownerReferences and finalizers lists, guarded by the resourceVersion so a
// concurrent change makes the patch fail with a Conflict instead of being
// overwritten. They serve custom resources, which don't accept strategic merge.

type mergePatch struct {
	Metadata mergePatchMeta `json:"metadata"`
}

type mergePatchMeta struct {
	// No omitempty: null removes the field when no owner is left.
	OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
	UID             types.UID               `json:"uid"`
	ResourceVersion string                  `json:"resourceVersion,omitempty"`
	// A pointer so that "unchanged" (omitted) differs from "now empty" (null).
	Finalizers *[]string `json:"finalizers,omitempty"`
}

// adoptMergeBytes is the JSON merge patch equivalent of
// adoptStrategicMergeBytes for obj.
func adoptMergeBytes(controller metav1.Object, kind schema.GroupVersionKind, obj metav1.Object, finalizers ...string) ([]byte, error) {
	refs := append(slices.Clone(obj.GetOwnerReferences()), controllerRef(controller, kind))
	meta := mergePatchMeta{OwnerReferences: refs, UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()}
	if len(finalizers) > 0 {
		merged := slices.Clone(obj.GetFinalizers())
		for _, f := range finalizers {
			if !slices.Contains(merged, f) {
				merged = append(merged, f)
			}
		}
		meta.Finalizers = &merged
	}
	return json.Marshal(&mergePatch{Metadata: meta})
}

// releaseMergeBytes is the JSON merge patch equivalent of
// GenerateDeleteOwnerRefStrategicMergeBytes for obj.
func releaseMergeBytes(ownerUID types.UID, obj metav1.Object, finalizers ...string) ([]byte, error) {
	refs := slices.DeleteFunc(slices.Clone(obj.GetOwnerReferences()), func(r metav1.OwnerReference) bool {
		return r.UID == ownerUID
	})
	if len(refs) == 0 {
		refs = nil
	}
	meta := mergePatchMeta{OwnerReferences: refs, UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()}
	if len(finalizers) > 0 {
		kept := slices.DeleteFunc(slices.Clone(obj.GetFinalizers()), func(f string) bool {
			return slices.Contains(finalizers, f)
		})
		meta.Finalizers = &kept
	}
	return json.Marshal(&mergePatch{Metadata: meta})
}
