package childset

import (
	"slices"
	"strconv"
	"strings"
)

// IndexLabel carries the index of a child created in indexed mode, so the
// highest index can be deleted first whatever the naming function.
const IndexLabel = "childset.ctrlkit.io/index"

// NameFunc names the child of index i of the owner called owner.
type NameFunc func(owner string, index int) string

// DefaultName is "<owner>-<index>".
func DefaultName(owner string, index int) string {
	return owner + "-" + strconv.Itoa(index)
}

// forMissing calls take(i, name) for each index i in [0, replicas) whose
// name is not in held, lowest first, until take returns false, and reports
// whether any name was missing. Its cost is bounded by len(held) plus the
// calls to take, whatever replicas says: a spec asking for billions of
// children costs no more than one asking for a few. A naming function that
// repeats a name ends the walk there.
func forMissing(owner string, replicas int, name NameFunc, held map[string]bool, take func(i int, name string) bool) bool {
	walked := make(map[string]bool)
	missing := false
	for i := range replicas {
		n := name(owner, i)
		if walked[n] {
			return missing
		}
		walked[n] = true
		if held[n] {
			continue
		}
		missing = true
		if !take(i, n) {
			return true
		}
	}
	return missing
}

// forWanted calls add with the name of each index in [0, replicas), as
// long as the names are held; it stops at the first name that is not, or
// once it has met more held names than there are (a naming function that
// repeats names), so its cost is bounded by len(held).
func forWanted(owner string, replicas int, name NameFunc, held map[string]bool, add func(name string)) {
	for i := range min(replicas, len(held)+1) {
		n := name(owner, i)
		if !held[n] {
			return
		}
		add(n)
	}
}

// childIndex is the index a child's IndexLabel gives, or -1 when it has
// none or it is not a non-negative integer.
func childIndex(labels map[string]string) int {
	v, ok := labels[IndexLabel]
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		return -1
	}
	return i
}

// indexedDeletionOrder sorts the children to delete in indexed mode: those
// without an index first (adopted objects that hold no wanted name), then
// the highest index first, then by name for a stable order.
func indexedDeletionOrder[C Object](extras []C) {
	slices.SortStableFunc(extras, func(a, b C) int {
		ia, ib := childIndex(a.GetLabels()), childIndex(b.GetLabels())
		if (ia < 0) != (ib < 0) {
			if ia < 0 {
				return -1
			}
			return 1
		}
		if ia != ib {
			return ib - ia
		}
		return strings.Compare(b.GetName(), a.GetName())
	})
}
