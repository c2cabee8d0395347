package childset

import "slices"

// ScaleInSpec is implemented by a Spec whose owners name the children a
// scale-down deletes first, as OpenKruise CloneSet's
// scaleStrategy.podsToDelete does: a user who knows which child is broken,
// or drained, or on a node going away, wants that one gone and not the one
// the deletion order would pick.
//
// Names choose which children a scale-down deletes, never how many: no
// more than the scale-down asks for, and the burst cap still applies:
//
//   - Interchangeable mode deletes the named active children first (among
//     them, in the deletion order), then continues in the deletion order.
//   - Indexed mode deletes only the children holding no wanted name (an
//     index at or beyond replicas, or none); names choose which of those go
//     first. A named child holding a wanted index is kept: deleting it
//     would only leave a gap the next sync fills again under the same name.
//   - During a rollout of interchangeable children, the named children go
//     first among children the plan treats alike (same revision, same
//     availability); the plan's bounds and revision order stand. An indexed
//     rollout keeps its index order.
//
// A name that matches no active child of the owner (unknown, empty,
// listed twice, another owner's child) is ignored.
type ScaleInSpec[O Object] interface {
	// ChildrenToDeleteFirst returns the names of the owner's children that
	// a scale-down deletes before any other.
	ChildrenToDeleteFirst(owner O) []string
}

// namedToDeleteFirst is the set of names the Spec's ChildrenToDeleteFirst
// gives for owner (an empty name matches no child); nil when the Spec does not
// implement ScaleInSpec or names nothing.
func (r *Reconciler[O, C]) namedToDeleteFirst(owner O) map[string]bool {
	spec, ok := r.spec.(ScaleInSpec[O])
	if !ok {
		return nil
	}
	var named map[string]bool
	for _, name := range spec.ChildrenToDeleteFirst(owner) {
		if named == nil {
			named = make(map[string]bool)
		}
		named[name] = true
	}
	return named
}

// namedFirst moves the children named to the front of children, keeping
// the order within either group.
func namedFirst[C Object](named map[string]bool, children []C) {
	if len(named) == 0 {
		return
	}
	slices.SortStableFunc(children, func(a, b C) int { return trueFirst(named[a.GetName()], named[b.GetName()]) })
}
