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

// missingIndices returns, lowest first, the indices in [0, replicas) whose
// name is not in held.
func missingIndices(owner string, replicas int, name NameFunc, held map[string]bool) []int {
	var missing []int
	for i := range replicas {
		if !held[name(owner, i)] {
			missing = append(missing, i)
		}
	}
	return missing
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
