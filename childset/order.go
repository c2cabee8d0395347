package childset

import (
	"strings"

	"github.com/ctrlkit/ctrlkit/podranking"
)

// DeletionCostAnnotation is read by DefaultOrder: a child with a lower cost
// is deleted first, as the pod-deletion-cost annotation does for pods. A
// missing or malformed value counts as 0.
const DeletionCostAnnotation = podranking.DeletionCostAnnotation

// Order compares two children for deletion: negative when a goes first.
type Order[C Object] func(a, b C) int

// DefaultOrder is the interchangeable mode's deletion order: not ready
// before ready, lower DeletionCostAnnotation first, newer before older
// (creation timestamp), then UID. ready is the Kind's Ready. Replace it
// with WithDeletionOrder.
func DefaultOrder[C Object](ready func(C) bool) Order[C] {
	if ready == nil {
		panic("childset: DefaultOrder: nil ready function")
	}
	return func(a, b C) int {
		if ra, rb := ready(a), ready(b); ra != rb {
			if !ra {
				return -1
			}
			return 1
		}
		if ca, cb := cost(a), cost(b); ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
		ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
		if !ta.Equal(&tb) {
			if tb.Before(&ta) {
				return -1
			}
			return 1
		}
		return strings.Compare(string(a.GetUID()), string(b.GetUID()))
	}
}

func cost(c Object) int32 {
	v, err := podranking.DeletionCost(c.GetAnnotations())
	if err != nil {
		return 0
	}
	return v
}
