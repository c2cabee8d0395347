package childset

import (
	"cmp"
	"math"
	"slices"
)

// rolloutChild is what planRollout knows of one child.
type rolloutChild struct {
	// Index is the child's index in indexed mode (see IndexLabel), -1
	// when it has none; interchangeable mode ignores it.
	Index int
	// Updated reports that the child is at the update revision; any other
	// revision is old.
	Updated bool
	// Available reports that the child is available (the Kind decides,
	// minReadySeconds included). A child being deleted never counts as
	// available, whatever this says.
	Available bool
	// Deleting reports that the child is being deleted (it has a deletion
	// timestamp): it still exists and holds its name, but is not live.
	Deleting bool
	// InPlace reports that the child, at an old revision, can be brought
	// to the update revision in place (InPlaceKind, under an in-place
	// UpdateStrategy) rather than replaced.
	InPlace bool
}

// rolloutInput is the input of planRollout: an owner's wanted number of
// children, its resolved bounds and partition, and every child it has,
// those being deleted included.
type rolloutInput struct {
	Replicas  int32
	Bounds    RolloutBounds
	Partition int32
	Indexed   bool
	// InPlaceOnly keeps the old children that cannot be updated in place
	// at their revision rather than replacing them (UpdateStrategy
	// InPlaceOnly).
	InPlaceOnly bool
	// Burst caps the creations, and separately the deletions, of one pass;
	// 0 means DefaultBurstReplicas.
	Burst int
	// Children in deletion order (interchangeable mode): the first of
	// children otherwise alike is deleted first, so pass them sorted by
	// the deletion order (DefaultOrder or yours). Indexed mode orders by
	// index and uses this order only between children of one index.
	Children []rolloutChild
}

// rolloutPlan is what one pass does. Deletions and creations may both be
// asked for at once; together they keep the bounds whichever completes
// first.
type rolloutPlan struct {
	// CreateUpdated and CreateCurrent are the children to create at the
	// update revision and at the current (old) revision, in
	// interchangeable mode.
	CreateUpdated, CreateCurrent int
	// CreateUpdatedIndices and CreateCurrentIndices are the indices to
	// create at either revision, in indexed mode, lowest first.
	CreateUpdatedIndices, CreateCurrentIndices []int
	// Delete holds positions in rolloutInput.Children, in the order to
	// delete them.
	Delete []int
	// UpdateInPlace holds the positions of old children to bring to the
	// update revision in place. Each counts as unavailable until it
	// reports the update done, so it takes from the same margin as a
	// deletion; it needs no room, being no new child.
	UpdateInPlace []int
}

// Empty reports that the pass does nothing: the rollout is complete, or
// it waits for children to become available or to go away.
func (p rolloutPlan) Empty() bool {
	return p.CreateUpdated == 0 && p.CreateCurrent == 0 &&
		len(p.CreateUpdatedIndices) == 0 && len(p.CreateCurrentIndices) == 0 && len(p.Delete) == 0 && len(p.UpdateInPlace) == 0
}

// planRollout decides one pass of a rolling update (a scale up or down
// included). It is pure: the caller performs the plan, waits until its
// informer shows the result (expectations), and plans again.
//
// Whichever of the plan's writes completes first, and whenever children
// become available, the pass keeps these invariants, with R the wanted
// replicas and every count taken over all the owner's children:
//
//   - children, those being deleted included, ≤ R + MaxSurge: creations
//     fill only the room left, and a child being deleted still takes room
//     until it is gone (a quota counts it; an indexed child holds its name);
//   - available children (not being deleted) ≥ R − MaxUnavailable, unless
//     they were fewer already, in which case no available child is
//     deleted: deleting an unavailable child costs nothing, so those go
//     first, and available ones only while the margin lasts;
//   - the partition: see below; old children beyond it go before updated
//     ones, and a child is never rolled back from the update revision.
//
// Interchangeable mode (Partition as OpenKruise CloneSet's): Partition is
// the number of children kept at an old revision, so the update stops at
// R − Partition updated children. A missing child is created at the
// current revision while fewer than Partition old children remain, at the
// update revision otherwise. Excess children are deleted old first, then
// updated; within a revision unavailable first, then in the given order.
//
// Indexed mode (as StatefulSet's RollingUpdate with podManagementPolicy
// Parallel and maxUnavailable): the children at indices below Partition
// stay as they are, and a missing one is created at the current revision;
// the others are replaced in place of their index, an old child deleted
// first and its index created again at the update revision once the name
// is free, unavailable children first, then the highest index first.
// Children holding no wanted index (none, ≥ R, or a second holder of an
// index) are deleted before any replacement. Since an index has one name,
// MaxSurge cannot add children: it only lets missing indices be created
// while unwanted children are still being deleted. MaxUnavailable counts
// as at least 1 when R > 0, as in StatefulSet, or no replacement could
// ever start. Unlike StatefulSet, unavailable old children are replaced
// whatever the budget, so a broken revision never blocks the update that
// fixes it.
//
// In place (rolloutChild.InPlace): an old child that would be replaced is
// updated in place instead, within the same margin; the updated child it
// would have been replaced by is then not created. With InPlaceOnly, an
// old child that cannot be updated in place is never replaced: it stays
// at its revision, as if within the partition, and a scale-down may still
// delete it.
func planRollout(s rolloutInput) rolloutPlan {
	b := newRolloutBudget(s)
	if s.Indexed {
		return planIndexed(s.Children, b, s.InPlaceOnly)
	}
	return planInterchangeable(s.Children, b, s.InPlaceOnly)
}

// rolloutBudget holds the pass's limits, derived once from the state.
type rolloutBudget struct {
	replicas int
	keep     int // children kept at the current revision
	room     int // creations allowed, burst included
	margin   int // available children that may be deleted
	burst    int
	// surgeOnly is set when no child may be unavailable: an in-place
	// update, which makes its child unavailable, then waits for room a
	// surge child makes.
	surgeOnly bool
}

func newRolloutBudget(s rolloutInput) rolloutBudget {
	replicas := max(int(s.Replicas), 0)
	surge := max(int(s.Bounds.MaxSurge), 0)
	unavailable := max(int(s.Bounds.MaxUnavailable), 0)
	if s.Indexed && replicas > 0 {
		unavailable = max(unavailable, 1)
	}
	burst := s.Burst
	if burst <= 0 {
		burst = DefaultBurstReplicas
	}
	available := 0
	for _, c := range s.Children {
		if isAvailable(c) {
			available++
		}
	}
	return rolloutBudget{
		replicas:  replicas,
		keep:      min(max(int(s.Partition), 0), replicas),
		room:      int(min(max(int64(replicas)+int64(surge)-int64(len(s.Children)), 0), int64(burst))), // int64: replicas+surge passes 2^31
		margin:    max(available-(replicas-unavailable), 0),
		burst:     burst,
		surgeOnly: unavailable == 0,
	}
}

func isAvailable(c rolloutChild) bool { return c.Available && !c.Deleting }

// planInterchangeable aims at keep old children (fewer if there are fewer
// and no free slot to create one in) and the rest updated.
func planInterchangeable(children []rolloutChild, b rolloutBudget, inPlaceOnly bool) rolloutPlan {
	var old, updated, pinned []int
	for i, c := range children {
		switch {
		case c.Deleting:
		case c.Updated:
			updated = append(updated, i)
		case inPlaceOnly && !c.InPlace:
			pinned = append(pinned, i)
		default:
			old = append(old, i)
		}
	}
	// Pinned children stay old, as the partition's would: they come last
	// among the old, so only a scale-down deletes them.
	keep := b.keep
	if len(pinned) > 0 {
		keep = min(keep+len(pinned), b.replicas)
	}
	unavailableFirst(children, old)
	old = append(old, pinned...)
	free := max(b.replicas-len(old)-len(updated), 0)
	wantOld := min(keep, len(old)+free)
	wantUpdated := b.replicas - wantOld

	var p rolloutPlan
	unavailableFirst(children, updated)
	excessOld := old[:max(len(old)-wantOld, 0)]
	// Of the old children going, as many as the updated ones missing are
	// updated in place when they can be; the others are deleted.
	missing := max(wantUpdated-len(updated), 0)
	var convert, remove []int
	for _, i := range excessOld {
		if children[i].InPlace && len(convert) < missing {
			convert = append(convert, i)
		} else {
			remove = append(remove, i)
		}
	}
	margin := b.margin
	p.UpdateInPlace = pick(children, convert, &margin, b.burst)
	// The children updated in place need no updated child created for
	// them; with no unavailability allowed, those waiting for one are
	// surged, as replacements would be, or the rollout could never start.
	converted := len(convert)
	if b.surgeOnly {
		converted = len(p.UpdateInPlace)
	}
	p.CreateCurrent = min(max(wantOld-len(old), 0), b.room)
	p.CreateUpdated = min(max(missing-converted, 0), b.room-p.CreateCurrent)
	p.Delete = pick(children, slices.Concat(remove, updated[:max(len(updated)-wantUpdated, 0)]), &margin, b.burst)
	return p
}

// planIndexed keeps one child per wanted index and replaces the old ones
// at or above the partition.
func planIndexed(children []rolloutChild, b rolloutBudget, inPlaceOnly bool) rolloutPlan {
	holders, unwanted := indexHolders(children, b.replicas)
	var replace, convert []int
	for index, i := range holders {
		c := children[i]
		switch {
		case index < b.keep || c.Updated || c.Deleting:
		case c.InPlace:
			convert = append(convert, i)
		case !inPlaceOnly:
			replace = append(replace, i)
		}
	}
	// No index first (as the scale-down order), then the highest index.
	rank := func(i int) int {
		if children[i].Index < 0 {
			return math.MaxInt
		}
		return children[i].Index
	}
	byIndex := func(i, j int) int { return cmp.Or(cmp.Compare(rank(j), rank(i)), cmp.Compare(i, j)) }
	slices.SortFunc(unwanted, byIndex)
	slices.SortFunc(replace, byIndex)
	slices.SortFunc(convert, byIndex)
	unavailableFirst(children, unwanted)
	unavailableFirst(children, replace)
	unavailableFirst(children, convert)

	var p rolloutPlan
	margin := b.margin
	p.Delete = pick(children, slices.Concat(unwanted, replace), &margin, b.burst)
	p.UpdateInPlace = pick(children, convert, &margin, b.burst)
	for index := 0; index < b.replicas && len(p.CreateUpdatedIndices)+len(p.CreateCurrentIndices) < b.room; index++ {
		if _, held := holders[index]; held {
			continue
		}
		if index < b.keep {
			p.CreateCurrentIndices = append(p.CreateCurrentIndices, index)
		} else {
			p.CreateUpdatedIndices = append(p.CreateUpdatedIndices, index)
		}
	}
	return p
}

// indexHolders maps each wanted index to the child holding it and returns
// the live children holding none: no index, one beyond the wanted ones, or
// an index another child holds better (live before being deleted, then
// available, then updated, then first given).
func indexHolders(children []rolloutChild, replicas int) (map[int]int, []int) {
	holders := make(map[int]int)
	var unwanted []int
	for i, c := range children {
		if c.Index < 0 || c.Index >= replicas {
			unwanted = append(unwanted, i)
			continue
		}
		h, taken := holders[c.Index]
		if !taken {
			holders[c.Index] = i
			continue
		}
		if holdsBetter(c, children[h]) {
			holders[c.Index], i = i, h
		}
		unwanted = append(unwanted, i)
	}
	return holders, slices.DeleteFunc(unwanted, func(i int) bool { return children[i].Deleting })
}

func holdsBetter(a, b rolloutChild) bool {
	rank := func(c rolloutChild) [3]bool { return [3]bool{!c.Deleting, isAvailable(c), c.Updated} }
	ra, rb := rank(a), rank(b)
	for k := range ra {
		if ra[k] != rb[k] {
			return ra[k]
		}
	}
	return false
}

// unavailableFirst stably moves the unavailable children of positions to
// the front.
func unavailableFirst(children []rolloutChild, positions []int) {
	slices.SortStableFunc(positions, func(i, j int) int {
		ai, aj := isAvailable(children[i]), isAvailable(children[j])
		switch {
		case ai == aj:
			return 0
		case !ai:
			return -1
		default:
			return 1
		}
	})
}

// pick walks positions in order and keeps each unavailable child, which
// costs no availability, and available ones while *margin lasts, up to
// the burst.
func pick(children []rolloutChild, positions []int, margin *int, burst int) []int {
	var out []int
	for _, i := range positions {
		if len(out) == burst {
			break
		}
		if isAvailable(children[i]) {
			if *margin == 0 {
				continue
			}
			*margin--
		}
		out = append(out, i)
	}
	return out
}
