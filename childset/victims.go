package childset

// VictimSpec is implemented by a Spec that chooses which active children a
// scale-down deletes, in place of the default order (pods rank by
// upstream's rules, which count the pods of related owners on each node).
// The core asks it only when it deletes some but not all of an owner's
// active children; the Spec then also applies ScaleInSpec's names, if it
// has them.
type VictimSpec[O Object, C Object] interface {
	// Victims returns n of active, the first to go first. traits[i] are
	// active[i]'s, as the sync read them. It must not modify active.
	Victims(owner O, active []C, traits []Traits, n int) []C
}
