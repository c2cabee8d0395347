package childset

// Traits are what a sync reads of each child once, in its claim pass, for
// the status and a scale-down: TraitReady is the Kind's Ready, and a
// TraitSpec may set the other bits for its own use (pods keep whether they
// carry every template label). The claim memo keeps them with the child,
// so a steady sync does not read a child it has seen before.
type Traits uint8

// TraitReady is the bit of Traits that says the Kind calls the child ready.
const TraitReady Traits = 1

// Ready reports whether TraitReady is set.
func (t Traits) Ready() bool { return t&TraitReady != 0 }

// TraitSpec is implemented by a Spec that reads more of each child than
// its readiness (see Traits). Traits must depend only on the child object
// and on what TraitsKey returns for the owner, never on the time: the
// claim memo reuses them until the child object or the key changes.
type TraitSpec[O Object, C Object] interface {
	// Traits returns the function that reads a child's traits for owner,
	// called once per sync; TraitReady must say whether the Kind calls
	// the child ready.
	Traits(owner O) func(child C) Traits
	// TraitsKey is what Traits reads of the owner, as a string.
	TraitsKey(owner O) string
}

// FinishedKind is implemented by a Kind whose children can finish and stay
// (pods that Succeeded or Failed). A finished child is neither active nor
// being deleted: the core does not claim, count or delete it, and creates
// another in its place, as upstream's ReplicaSet does.
type FinishedKind[C Object] interface {
	Finished(child C) bool
}

// traitReader returns what reads the traits of owner's children.
func (r *Reconciler[O, C]) traitReader(owner O) func(C) Traits {
	if r.traits != nil {
		return r.traits.Traits(owner)
	}
	return func(child C) Traits {
		// A child updated in place is not ready until it runs what it
		// was updated to.
		if r.kind.Ready(child) && (r.inPlace == nil || r.inPlace.InPlaceDone(child)) {
			return TraitReady
		}
		return 0
	}
}

// traitsKey is what the traits of owner's children depend on.
func (r *Reconciler[O, C]) traitsKey(owner O) string {
	if r.traits != nil {
		return r.traits.TraitsKey(owner)
	}
	return ""
}

// finished reports whether child is finished (FinishedKind).
func (r *Reconciler[O, C]) finished(child C) bool {
	return r.finishedKind != nil && r.finishedKind.Finished(child)
}
