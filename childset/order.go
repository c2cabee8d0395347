package childset

import (
	"cmp"
	"slices"
	"strings"
	"time"

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
		ka, kb := deletionKeyOf(a, ready(a), false, 0), deletionKeyOf(b, ready(b), false, 0)
		return ka.compare(&kb)
	}
}

// deletionKey is what DefaultOrder reads of one child. The core reads it
// once per child and sorts the keys: comparing children directly would
// call Ready and parse the cost annotation twice per comparison, which at
// 10,000 children was most of a scale-down.
type deletionKey struct {
	// named is set for a child a ScaleInSpec names: it goes before the
	// rest, whatever DefaultOrder says.
	named    bool
	notReady bool
	cost     int32
	created  time.Time
	uid      string
	// pos is the child's position in the input: the last tie-break, so
	// that sorting keys gives what a stable sort of the children does.
	pos int
}

func deletionKeyOf[C Object](c C, ready, named bool, pos int) deletionKey {
	return deletionKey{named: named, notReady: !ready, cost: cost(c), created: c.GetCreationTimestamp().Time,
		uid: string(c.GetUID()), pos: pos}
}

// compare is the named children first, then DefaultOrder on two keys, then
// their input positions.
func (a *deletionKey) compare(b *deletionKey) int {
	if c := trueFirst(a.named, b.named); c != 0 {
		return c
	}
	if c := trueFirst(a.notReady, b.notReady); c != 0 {
		return c
	}
	if c := cmp.Compare(a.cost, b.cost); c != 0 {
		return c
	}
	// Newer first.
	if c := b.created.Compare(a.created); c != 0 {
		return c
	}
	if c := strings.Compare(a.uid, b.uid); c != 0 {
		return c
	}
	return cmp.Compare(a.pos, b.pos)
}

// trueFirst orders true before false.
func trueFirst(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// inDeletionOrder returns the first k of children in deletion order (all
// of them when k >= len(children)), as a stable sort by the Reconciler's
// order would leave them, the children named (ScaleInSpec; nil: none)
// first; ready[i] is whether children[i] is ready.
func (r *Reconciler[O, C]) inDeletionOrder(children []C, ready []bool, named map[string]bool, k int) []C {
	order := r.deletionOrder(children, ready, named, k)
	out := make([]C, len(order))
	for i, at := range order {
		out[i] = children[at]
	}
	return out
}

// deletionOrder is inDeletionOrder as positions in children. The default
// order is total once the input position breaks ties, so any exact
// selection of its keys gives a stable sort's answer: the first k are
// chosen with a bounded heap over the keys, in place (n log k instead of a
// sort's n log n), then sorted. A WithDeletionOrder order is the caller's
// function and is sorted stably as given.
func (r *Reconciler[O, C]) deletionOrder(children []C, ready []bool, named map[string]bool, k int) []int {
	k = max(0, min(k, len(children)))
	if r.order != nil {
		order := make([]int, len(children))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			if c := trueFirst(named[children[a].GetName()], named[children[b].GetName()]); c != 0 {
				return c
			}
			return r.order(children[a], children[b])
		})
		return order[:k:k]
	}
	keys := make(deletionKeys, len(children))
	for i, c := range children {
		keys[i] = deletionKeyOf(c, ready[i], named[c.GetName()], i)
	}
	if k > 0 && k < len(keys) {
		first := keys[:k]
		first.heapify()
		for i := k; i < len(keys); i++ {
			if keys[i].compare(&first[0]) < 0 {
				first[0] = keys[i]
				first.siftDown(0)
			}
		}
	}
	keys = keys[:k]
	slices.SortFunc(keys, func(a, b deletionKey) int { return a.compare(&b) })
	order := make([]int, k)
	for i := range keys {
		order[i] = keys[i].pos
	}
	return order
}

// deletionKeys is a max-heap of keys: its root is the last in deletion
// order, the first to give way to a key that goes before it. It is written
// out rather than driven through container/heap: a scale-down of 10,000
// children fixes the heap thousands of times, and the interface's indirect
// calls were a tenth of the sync.
type deletionKeys []deletionKey

// heapify orders h as a heap.
func (h deletionKeys) heapify() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.siftDown(i)
	}
}

// siftDown moves h[i] down until neither child goes after it.
func (h deletionKeys) siftDown(i int) {
	for {
		last := i
		if l := 2*i + 1; l < len(h) && h[l].compare(&h[last]) > 0 {
			last = l
		}
		if r := 2*i + 2; r < len(h) && h[r].compare(&h[last]) > 0 {
			last = r
		}
		if last == i {
			return
		}
		h[i], h[last] = h[last], h[i]
		i = last
	}
}

func cost(c Object) int32 {
	v, err := podranking.DeletionCost(c.GetAnnotations())
	if err != nil {
		return 0
	}
	return v
}
