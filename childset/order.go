package childset

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/ctrlkit/ctrlkit/internal/partialsort"
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
	deletionTie
	// pos is the child's position in the input: the last tie-break, so
	// that sorting keys gives what a stable sort of the children does.
	pos int
}

// deletionTie is what orders children alike in name, readiness and cost:
// the newer first, then by UID.
type deletionTie struct {
	// The creation time as seconds and nanoseconds of the second: the
	// order of time.Time, in 12 bytes instead of 24.
	sec  int64
	nsec int32
	uid  string
}

func deletionKeyOf[C Object](c C, ready, named bool, pos int) deletionKey {
	return deletionKey{named: named, notReady: !ready, cost: cost(c), deletionTie: deletionTieOf(c), pos: pos}
}

func deletionTieOf[C Object](c C) deletionTie {
	created := c.GetCreationTimestamp().Time
	return deletionTie{sec: created.Unix(), nsec: int32(created.Nanosecond()), uid: string(c.GetUID())}
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
	if c := a.deletionTie.compare(&b.deletionTie); c != 0 {
		return c
	}
	return cmp.Compare(a.pos, b.pos)
}

func (a *deletionTie) compare(b *deletionTie) int {
	// Newer first.
	if c := cmp.Compare(b.sec, a.sec); c != 0 {
		return c
	}
	if c := cmp.Compare(b.nsec, a.nsec); c != 0 {
		return c
	}
	return strings.Compare(a.uid, b.uid)
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
	return atPositions(children, r.deletionOrder(children, ready, named, k))
}

// atPositions returns the children at positions order.
func atPositions[C Object](children []C, order []int) []C {
	out := make([]C, len(order))
	for i, at := range order {
		out[i] = children[at]
	}
	return out
}

// deletionOrder is inDeletionOrder as positions in children. The default
// order is total once the input position breaks ties, so the first k of
// any exact sort are a stable sort's: each child's key is read once and
// packed (deletionKeys), and partialsort sorts only as far as the first k
// need, a few passes over n entries of 16 bytes instead of a sort of all
// of them. A WithDeletionOrder order is the caller's function and is
// sorted stably as given.
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
	keys := newDeletionKeys(len(children), named)
	for i, c := range children {
		addDeletionKey(keys, c, ready[i])
	}
	return keys.first(k)
}

// The packed default order: Primary holds, from the high bits, named
// first, not ready first, the cost (lower first) and the creation second
// (newer first) counted back from the newest child's, so that most
// comparisons are one integer's. A second count past createdMax, which
// only children more than 34 years apart reach, shares the field with
// every older one; the tie-break compares their full times.
const (
	namedShift   = 63
	readyShift   = 62
	costShift    = 30
	createdMax   = 1<<costShift - 1
	costSignFlip = 1 << 31
)

// deletionKeys is the packed default order of children read one at a
// time (addDeletionKey), the named ones first. What Primary holds is not
// kept: a tie is decided by the creation time and UID alone (deletionTie),
// then the input position.
type deletionKeys struct {
	named  map[string]bool
	order  []partialsort.Entry
	ties   []deletionTie
	newest int64
}

// deletionKeysPool holds the buffers of scale-downs done: at 10,000
// children they are 480 KiB, which each scale-down would otherwise leave to
// the collector, whose cycles over a heap of 10,000 children were a fifth
// of the scale-down.
var deletionKeysPool sync.Pool

func newDeletionKeys(n int, named map[string]bool) *deletionKeys {
	if d, ok := deletionKeysPool.Get().(*deletionKeys); ok && cap(d.order) >= n && cap(d.ties) >= n {
		*d = deletionKeys{named: named, order: d.order[:0], ties: d.ties[:0], newest: math.MinInt64}
		return d
	}
	return &deletionKeys{named: named, order: make([]partialsort.Entry, 0, n), ties: make([]deletionTie, 0, n),
		newest: math.MinInt64}
}

// addDeletionKey reads the key of the next child, c.
func addDeletionKey[C Object](d *deletionKeys, c C, ready bool) {
	var p uint64
	// Most scale-downs name no child: the name is not read then.
	if len(d.named) == 0 || !d.named[c.GetName()] {
		p |= 1 << namedShift
	}
	if ready {
		p |= 1 << readyShift
	}
	p |= uint64(uint32(cost(c))^costSignFlip) << costShift
	d.order = append(d.order, partialsort.Entry{Primary: p, Pos: int32(len(d.order))})
	tie := deletionTieOf(c)
	d.ties = append(d.ties, tie)
	d.newest = max(d.newest, tie.sec)
}

// first returns the positions of the first k children in deletion order.
// It is called once: it completes the keys with the creation seconds, and
// gives d's buffers back to the pool.
func (d *deletionKeys) first(k int) []int {
	for i := range d.order {
		// newest is the largest second, so only an overflow, between
		// times billions of years apart, makes the count negative.
		if back := d.newest - d.ties[i].sec; back >= 0 && back < createdMax {
			d.order[i].Primary |= uint64(back)
		} else {
			d.order[i].Primary |= createdMax
		}
	}
	ties := d.ties
	s := partialsort.Sorter{Order: d.order, Tie: func(a, b int32) bool {
		if c := ties[a].compare(&ties[b]); c != 0 {
			return c < 0
		}
		return a < b
	}}
	k = max(0, min(k, len(d.order)))
	s.SortPrefix(k)
	order := make([]int, k)
	for i, e := range s.Order[:k] {
		order[i] = int(e.Pos)
	}
	clear(d.ties) // drop the UIDs
	d.named = nil
	deletionKeysPool.Put(d)
	return order
}

func cost(c Object) int32 {
	v, err := podranking.DeletionCost(c.GetAnnotations())
	if err != nil {
		return 0
	}
	return v
}
