package childset

import (
	"fmt"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/internal/ownerkey"
)

// The Observe methods feed the core's expectations from informer events,
// for any driver, and return the work keys ("namespace/name") of the
// owners to sync: the child's controller, when it is of the owner's kind,
// or for an orphan the owners of its namespace that may adopt it
// (claim.Adopters), listed through WithOwnerLister. Without a lister an
// orphan wakes no owner, and is adopted at its owners' next sync. They
// touch no queue; every driver (this package's, childsetcr's and
// podsetcr's handlers, podset's) applies them as they are.

// ObserveAdd records that the cache shows child; a child that is already
// being deleted counts as a deletion.
func (r *Reconciler[O, C]) ObserveAdd(child C) []string {
	if child.GetDeletionTimestamp() != nil {
		return r.ObserveDelete(child, false)
	}
	ref := r.controllerOf(child)
	if ref == nil {
		return r.adopters(child)
	}
	r.exp.CreationObservedNamed(expectations.OwnerKeyForRef(child.GetNamespace(), ref), child.GetName())
	return []string{ownerkey.Join(child.GetNamespace(), ref.Name, "")}
}

// ObserveUpdate records an update of child from old to cur: the old
// controller's key and the new one's when the controller reference
// changed, and for an orphan just released, or whose labels changed, the
// owners that may adopt it (others saw it already). A child whose
// deletion began counts as deleted: it no longer counts toward its owner.
// A resync (the same resource version) changed nothing, and names no owner.
func (r *Reconciler[O, C]) ObserveUpdate(old, cur C) []string {
	if old.GetResourceVersion() == cur.GetResourceVersion() {
		return nil
	}
	var keys []string
	oldRef, curRef := r.controllerOf(old), r.controllerOf(cur)
	if oldRef != nil && (curRef == nil || oldRef.UID != curRef.UID) {
		keys = append(keys, ownerkey.Join(old.GetNamespace(), oldRef.Name, ""))
	}
	switch {
	case cur.GetDeletionTimestamp() != nil:
		keys = append(keys, r.ObserveDelete(cur, false)...)
	case curRef != nil:
		keys = append(keys, ownerkey.Join(cur.GetNamespace(), curRef.Name, ""))
	case metav1.GetControllerOfNoCopy(old) != nil || !maps.Equal(old.GetLabels(), cur.GetLabels()):
		keys = append(keys, r.adopters(cur)...)
	}
	return keys
}

// ObserveDelete records that child is gone, or being deleted, for its
// controller. finalStateUnknown says the informer missed the deletion and
// child is the last state it saw (client-go's DeletedFinalStateUnknown,
// controller-runtime's DeleteStateUnknown), which may be older than an
// adoption or a release: the owners whose selector matches it are then
// synced too, since one of them may have held it since.
func (r *Reconciler[O, C]) ObserveDelete(child C, finalStateUnknown bool) []string {
	var keys []string
	if ref := r.controllerOf(child); ref != nil {
		r.exp.DeletionObserved(expectations.OwnerKeyForRef(child.GetNamespace(), ref), childKey(child))
		keys = append(keys, ownerkey.Join(child.GetNamespace(), ref.Name, ""))
	}
	if finalStateUnknown {
		keys = append(keys, ownerKeys(claim.Selecting(labels.Set(child.GetLabels()), r.owners(child.GetNamespace()), r.spec.Selector))...)
	}
	return keys
}

// OwnerKeys returns the keys of the owners an event about child matters
// to, recording nothing: its controller's, or for an orphan the owners
// that may adopt it. It serves events that observe nothing, such as
// controller-runtime's generic events.
func (r *Reconciler[O, C]) OwnerKeys(child C) []string {
	if ref := r.controllerOf(child); ref != nil {
		return []string{ownerkey.Join(child.GetNamespace(), ref.Name, "")}
	}
	return r.adopters(child)
}

// ObserveOwnerUpdate returns cur's key, for every update of an owner,
// resyncs included, as upstream syncs it: with a resync period on the
// informer that periodically re-checks every owner. A changed UID means
// the owner was deleted and re-created between two observations (the
// informer missed the deletion), so the old incarnation is observed
// deleted first.
func (r *Reconciler[O, C]) ObserveOwnerUpdate(old, cur O) []string {
	if old.GetUID() != cur.GetUID() {
		r.ObserveOwnerDelete(old)
	}
	return []string{ownerkey.Join(cur.GetNamespace(), cur.GetName(), "")}
}

// ObserveOwnerDelete forgets the expectations, the claim memo and the
// read-your-writes record of a deleted owner, and what the Spec keeps for
// it (OwnerForgetter). All but the Spec's are keyed by UID, so a
// re-created owner of the same name is unaffected.
func (r *Reconciler[O, C]) ObserveOwnerDelete(owner O) {
	key := ownerkey.Join(owner.GetNamespace(), owner.GetName(), "")
	r.exp.DeleteExpectations(expectations.OwnerKeyFor(owner))
	r.claimMemos.Drop(key)
	r.inFlight.forget(key)
	r.refusedInPlace.forget(key)
	if g := r.cfg.guard; g != nil {
		g.Clear(expectations.OwnerKeyFor(owner))
	}
	if f, ok := r.spec.(OwnerForgetter); ok {
		f.ForgetOwner(key)
	}
}

// OwnerForgetter is a Spec that keeps something per owner between syncs
// (a memo of what it built or ranked): ObserveOwnerDelete calls
// ForgetOwner with the deleted owner's "namespace/name" key, so the memo
// does not outlive the owner.
type OwnerForgetter interface {
	ForgetOwner(key string)
}

// adopters returns the keys of the owners that may adopt child, an orphan
// (claim.Adopters). Several are a user error (overlapping selectors),
// reported but not fatal, as upstream reports it: all of them are woken
// and the first to claim the child keeps it.
func (r *Reconciler[O, C]) adopters(child C) []string {
	if metav1.GetControllerOfNoCopy(child) != nil || r.cfg.owners == nil {
		return nil
	}
	adopters := claim.Adopters(child, r.owners(child.GetNamespace()), r.spec.Selector)
	if len(adopters) > 1 {
		utilruntime.HandleError(fmt.Errorf("user error: more than one %s is selecting children with labels: %v",
			r.gvk.Kind, child.GetLabels()))
	}
	return ownerKeys(adopters)
}

// owners lists the owners of namespace through WithOwnerLister's function;
// none without one, or when the listing fails, which is reported.
func (r *Reconciler[O, C]) owners(namespace string) []O {
	list, ok := r.cfg.owners.(func(string) ([]O, error))
	if !ok {
		return nil
	}
	owners, err := list(namespace)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("listing the %s of namespace %s: %w", r.gvk.Kind, namespace, err))
		return nil
	}
	return owners
}

func ownerKeys[O Object](owners []O) []string {
	if len(owners) == 0 {
		return nil
	}
	keys := make([]string, len(owners))
	for i, o := range owners {
		keys[i] = ownerkey.Join(o.GetNamespace(), o.GetName(), "")
	}
	return keys
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
