package claim

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Adopters returns the owners that may adopt obj, in their order: none
// unless obj is an orphan (no controller reference) that is not being
// deleted and has labels, and then those whose selector is usable (selector
// returns no error and a non-empty selector) and selects obj's labels. It is
// the one rule by which event handlers find the owners to sync for an
// orphan, as upstream's ReplicaSet controller finds them; the claim of each
// owner then decides. Owners that match an orphan together are a user error
// (overlapping selectors); all of them are returned, and the first claim to
// patch the orphan wins.
func Adopters[O any](obj metav1.Object, owners []O, selector func(owner O) (labels.Selector, error)) []O {
	if metav1.GetControllerOfNoCopy(obj) != nil || obj.GetDeletionTimestamp() != nil || len(obj.GetLabels()) == 0 {
		return nil
	}
	return Selecting(labels.Set(obj.GetLabels()), owners, selector)
}

// Selecting returns the owners, in their order, whose selector is usable
// (selector returns no error and a non-empty selector) and selects set: the
// owners an object with those labels would belong to, whoever controls it
// now. Adopters is the rule for orphans.
func Selecting[O any](set labels.Set, owners []O, selector func(owner O) (labels.Selector, error)) []O {
	var out []O
	for _, owner := range owners {
		sel, err := selector(owner)
		if err != nil || sel == nil || sel.Empty() || !sel.Matches(set) {
			continue
		}
		out = append(out, owner)
	}
	return out
}
