package expecthandler

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/expectations"
)

// Tracker is the expectations of one controller, shared by its Handler and
// its Reconcile. It is safe for concurrent use.
type Tracker struct {
	exp       *expectations.UIDTrackingControllerExpectations
	counts    *expectations.ControllerExpectations // what exp wraps, for named creations
	ownerKind schema.GroupKind
}

// NewTracker returns the tracker of a controller whose owners are of kind
// ownerKind; only controller references to that kind are followed. opts
// configure the expectations cache (TTL, clock, logger).
func NewTracker(ownerKind schema.GroupKind, opts ...expectations.Option) *Tracker {
	counts := expectations.NewControllerExpectations(opts...)
	return &Tracker{
		exp:       expectations.NewUIDTrackingControllerExpectations(counts),
		counts:    counts,
		ownerKind: ownerKind,
	}
}

// OwnerKind returns the kind of owner the tracker follows.
func (t *Tracker) OwnerKind() schema.GroupKind { return t.ownerKind }

// Expectations returns the underlying cache, for what the tracker does not
// wrap (Pending, GetUIDs, ...).
func (t *Tracker) Expectations() *expectations.UIDTrackingControllerExpectations { return t.exp }

// Satisfied reports whether every creation and deletion expected for owner
// has been observed, or the record expired: only then does the cache show
// the owner's objects as they are. An owner without a record is satisfied.
func (t *Tracker) Satisfied(owner metav1.Object) bool {
	return t.exp.SatisfiedExpectations(expectations.OwnerKeyFor(owner))
}

// ExpectCreations records that Reconcile is about to create n objects for
// owner. Call it before the first create.
func (t *Tracker) ExpectCreations(owner metav1.Object, n int) error {
	if err := t.exp.ExpectCreations(expectations.OwnerKeyFor(owner), n); err != nil {
		return fmt.Errorf("expecting %d creations for %s: %w", n, expectations.OwnerKeyFor(owner), err)
	}
	return nil
}

// ExpectDeletions records that Reconcile is about to delete dependents of
// owner. Call it before the first delete.
func (t *Tracker) ExpectDeletions(owner metav1.Object, dependents []client.Object) error {
	keys := make([]string, 0, len(dependents))
	for _, d := range dependents {
		keys = append(keys, dependentKey(d.GetNamespace(), d.GetName()))
	}
	if err := t.exp.ExpectDeletions(expectations.OwnerKeyFor(owner), keys); err != nil {
		return fmt.Errorf("expecting %d deletions for %s: %w", len(keys), expectations.OwnerKeyFor(owner), err)
	}
	return nil
}

// CreationFailed lowers owner's expected creations by one, for a create that
// failed or was skipped: no event will ever report it.
func (t *Tracker) CreationFailed(owner metav1.Object) {
	t.exp.CreationObserved(expectations.OwnerKeyFor(owner))
}

// DeletionFailed drops the expected deletion of dependent, for a delete that
// failed (other than NotFound, whose event does arrive or already did).
func (t *Tracker) DeletionFailed(owner metav1.Object, dependent client.Object) {
	t.exp.DeletionObserved(expectations.OwnerKeyFor(owner), dependentKey(dependent.GetNamespace(), dependent.GetName()))
}

// Forget drops owner's record, for an owner that is gone.
func (t *Tracker) Forget(owner metav1.Object) {
	t.exp.DeleteExpectations(expectations.OwnerKeyFor(owner))
}

// ownerRef returns the controller reference of obj if it points at the
// tracker's owner kind. A malformed apiVersion matches nothing.
func (t *Tracker) ownerRef(obj metav1.Object) *metav1.OwnerReference {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || ref.Kind != t.ownerKind.Kind {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != t.ownerKind.Group {
		return nil
	}
	return ref
}

// observeCreation lowers the owner's count, or, on a record of named
// creations, only if obj's name is still expected.
func (t *Tracker) observeCreation(obj metav1.Object, ref *metav1.OwnerReference) {
	t.counts.CreationObservedNamed(expectations.OwnerKeyForRef(obj.GetNamespace(), ref), obj.GetName())
}

func (t *Tracker) observeDeletion(obj metav1.Object, ref *metav1.OwnerReference) {
	t.exp.DeletionObserved(expectations.OwnerKeyForRef(obj.GetNamespace(), ref), dependentKey(obj.GetNamespace(), obj.GetName()))
}

// dependentKey is the key deletions are tracked by: upstream's pod key.
func dependentKey(namespace, name string) string {
	return types.NamespacedName{Namespace: namespace, Name: name}.String()
}
