package childset

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/internal/ownerkey"
)

// The Observe methods feed the core's expectations from informer events,
// for any driver: each records what the event fulfils and returns the work
// key ("namespace/name") of the owner to sync, or "" when the child has no
// controller of the owner's kind (an orphan: the driver syncs the owners
// whose selector matches it, see Controller). They touch no queue.

// ObserveAdd records that the cache shows child; a child that is already
// being deleted counts as a deletion.
func (r *Reconciler[O, C]) ObserveAdd(child C) string {
	if child.GetDeletionTimestamp() != nil {
		return r.ObserveDelete(child)
	}
	ref := r.controllerOf(child)
	if ref == nil {
		return ""
	}
	r.exp.CreationObservedNamed(expectations.OwnerKeyForRef(child.GetNamespace(), ref), child.GetName())
	return ownerkey.Join(child.GetNamespace(), ref.Name, "")
}

// ObserveUpdate records an update of child from old to cur and returns the
// keys of the owners to sync: the old controller's and the new one's when
// the controller reference changed. A child whose deletion began counts as
// deleted: it no longer counts toward its owner.
func (r *Reconciler[O, C]) ObserveUpdate(old, cur C) []string {
	var keys []string
	oldRef, curRef := r.controllerOf(old), r.controllerOf(cur)
	if oldRef != nil && (curRef == nil || oldRef.UID != curRef.UID) {
		keys = append(keys, ownerkey.Join(old.GetNamespace(), oldRef.Name, ""))
	}
	if cur.GetDeletionTimestamp() != nil {
		if k := r.ObserveDelete(cur); k != "" {
			keys = append(keys, k)
		}
		return keys
	}
	if curRef != nil {
		keys = append(keys, ownerkey.Join(cur.GetNamespace(), curRef.Name, ""))
	}
	return keys
}

// ObserveDelete records that child is gone, or being deleted.
func (r *Reconciler[O, C]) ObserveDelete(child C) string {
	ref := r.controllerOf(child)
	if ref == nil {
		return ""
	}
	r.exp.DeletionObserved(expectations.OwnerKeyForRef(child.GetNamespace(), ref), childKey(child))
	return ownerkey.Join(child.GetNamespace(), ref.Name, "")
}

// ObserveOwnerDelete forgets the expectations and the claim memo of a
// deleted owner.
func (r *Reconciler[O, C]) ObserveOwnerDelete(owner O) {
	r.exp.DeleteExpectations(expectations.OwnerKeyFor(owner))
	r.claimMemos.Drop(ownerkey.Join(owner.GetNamespace(), owner.GetName(), ""))
}

// controllerOf is child's controller reference when it points at the
// owner's kind, else nil.
func (r *Reconciler[O, C]) controllerOf(child C) *metav1.OwnerReference {
	ref := metav1.GetControllerOfNoCopy(child)
	if ref == nil || ref.Kind != r.gvk.Kind {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != r.gvk.Group {
		return nil
	}
	return ref
}
