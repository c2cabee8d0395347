package history

import (
	"bytes"
	"cmp"
	"errors"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ControllerRevisionHashLabel is the label that carries the hash of a
// ControllerRevision's data.
const ControllerRevisionHashLabel = "controller.kubernetes.io/hash"

// NewControllerRevision returns a revision controlled by parent (of kind
// parentKind) with a copy of templateLabels plus ControllerRevisionHashLabel,
// the given data and revision number, named
// ControllerRevisionName(parent's name, HashControllerRevision(revision,
// collisionCount)). It does not set the namespace; CreateControllerRevision
// uses the parent's. A nil parent is an error.
func NewControllerRevision(parent metav1.Object, parentKind schema.GroupVersionKind, templateLabels map[string]string,
	data runtime.RawExtension, revision int64, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	if parent == nil {
		return nil, errors.New("history: NewControllerRevision: nil parent")
	}
	labels := make(map[string]string, len(templateLabels)+1)
	maps.Copy(labels, templateLabels)
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Labels:          labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(parent, parentKind)},
		},
		Data:     data,
		Revision: revision,
	}
	hash := HashControllerRevision(cr, collisionCount)
	cr.Name = ControllerRevisionName(parent.GetName(), hash)
	cr.Labels[ControllerRevisionHashLabel] = hash
	return cr, nil
}

// SortControllerRevisions sorts revisions in place by Revision, then by
// creation time, then by name, oldest first: upstream's order. Equal
// revisions keep their relative order. nil entries go last.
func SortControllerRevisions(revisions []*appsv1.ControllerRevision) {
	slices.SortStableFunc(revisions, compareRevisions)
}

func compareRevisions(a, b *appsv1.ControllerRevision) int {
	if a == nil || b == nil {
		return compareNil(a == nil, b == nil)
	}
	if c := cmp.Compare(a.Revision, b.Revision); c != 0 {
		return c
	}
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

// compareNil orders nil after everything else; it is called only when at
// least one side is nil.
func compareNil(aNil, bNil bool) int {
	switch {
	case aNil && bNil:
		return 0
	case aNil:
		return 1
	default:
		return -1
	}
}

// EqualRevision reports whether lhs and rhs are both nil, or both non-nil
// with byte-equal Data.Raw and semantically equal Data.Object.
func EqualRevision(lhs, rhs *appsv1.ControllerRevision) bool {
	if lhs == nil || rhs == nil {
		return lhs == rhs
	}
	return bytes.Equal(lhs.Data.Raw, rhs.Data.Raw) && apiequality.Semantic.DeepEqual(lhs.Data.Object, rhs.Data.Object)
}

// FindEqualRevisions returns the revisions equal to needle by EqualRevision,
// in their order in revisions; nil when there are none.
func FindEqualRevisions(revisions []*appsv1.ControllerRevision, needle *appsv1.ControllerRevision) []*appsv1.ControllerRevision {
	var eq []*appsv1.ControllerRevision
	for _, r := range revisions {
		if EqualRevision(r, needle) {
			eq = append(eq, r)
		}
	}
	return eq
}
