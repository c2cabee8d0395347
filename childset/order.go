package childset

import (
	"cmp"
	"encoding/binary"
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
	deletionFacts
	uid string
	// pos is the child's position in the input: the last tie-break, so
	// that sorting keys gives what a stable sort of the children does.
	pos int
}

// deletionFacts is what DefaultOrder reads of a child besides its
// readiness, but for the whole UID: its cost, creation time and the UID's
// head. They depend on the child object alone, so the claim memo keeps
// them (claimMemo.facts), and a scale-down over children it has met reads
// a child only where two heads are equal. Holding no pointer, they cost
// the collector nothing to keep.
type deletionFacts struct {
	// The creation time as seconds and nanoseconds of the second: the
	// order of time.Time, in 12 bytes instead of 24; the cost fills the
	// rest of the word.
	sec  int64
	nsec int32
	cost int32
	// uidHead is the UID's first 8 bytes, big-endian, zero-padded: where
	// two differ, they order the UIDs as the strings do. Children created
	// in one second tie on everything else (the API server keeps whole
	// seconds), and a UUID's head decides without reading the string.
	uidHead uint64
}

func deletionKeyOf[C Object](c C, ready, named bool, pos int) deletionKey {
	return deletionKey{named: named, notReady: !ready, deletionFacts: deletionFactsOf(c), uid: string(c.GetUID()), pos: pos}
}

func deletionFactsOf[C Object](c C) deletionFacts {
	created := c.GetCreationTimestamp().Time
	var head [8]byte
	copy(head[:], c.GetUID())
	return deletionFacts{sec: created.Unix(), nsec: int32(created.Nanosecond()), cost: cost(c),
		uidHead: binary.BigEndian.Uint64(head[:])}
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
	if c := a.compareTie(&b.deletionFacts); c != 0 {
		return c
	}
	if c := strings.Compare(a.uid, b.uid); c != 0 {
		return c
	}
	return cmp.Compare(a.pos, b.pos)
}

// compareTie orders children alike in name, readiness and cost: the newer
// first, then by UID as far as the heads tell; 0 leaves it to the whole
// UIDs.
func (a *deletionFacts) compareTie(b *deletionFacts) int {
	if c := cmp.Compare(b.sec, a.sec); c != 0 {
		return c
	}
	if c := cmp.Compare(b.nsec, a.nsec); c != 0 {
		return c
	}
	return cmp.Compare(a.uidHead, b.uidHead)
}

// factsView is the deletion facts of some children: child i's are
// arena[at[i]], or arena[i] when at is nil. The claim memo's arena is
// appended to and replaced, never written in place, so a view stays true.
type factsView struct {
	arena []deletionFacts
	at    []int32
}

func (v *factsView) of(i int32) *deletionFacts {
	if v.at == nil {
		return &v.arena[i]
	}
	return &v.arena[v.at[i]]
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

// ordersByFacts reports whether a scale-down may delete by the default
// order, which deletionFacts serve: not when the Spec chooses the victims,
// the caller gave an order, or children are indexed.
func (r *Reconciler[O, C]) ordersByFacts() bool {
	return r.order == nil && r.victims == nil && !r.cfg.indexed
}

// deletionOrder is inDeletionOrder as positions in children. The default
// order is total once the input position breaks ties, so the first k of
// any exact sort are a stable sort's: each child's key is read once and
// packed (deletionKeys), and partialsort sorts only as far as the first k
// need, a few passes over n entries of 16 bytes instead of a sort of all
// of them. A WithDeletionOrder order is the caller's function and is
// sorted stably as given.
func (r *Reconciler[O, C]) deletionOrder(children []C, ready []bool, named map[string]bool, k int) []int {
	return r.deletionOrderOf(children, ready, factsView{}, named, k)
}

// deletionOrderOf is deletionOrder with facts the deletionFacts of the
// children, as the claim memo kept them; a zero view reads them from the
// children. The default order then reads a child for its name only when a
// ScaleInSpec names some, and for its UID only when two heads tie.
func (r *Reconciler[O, C]) deletionOrderOf(children []C, ready []bool, facts factsView, named map[string]bool, k int) []int {
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
	d := newDeletionKeys(len(children), facts.arena == nil)
	if facts.arena == nil {
		for _, c := range children {
			d.read = append(d.read, deletionFactsOf(c))
		}
		facts = factsView{arena: d.read}
	}
	packDeletionKeys(d, children, &facts, ready, named)
	return d.first(&facts, func(i int32) string { return string(children[i].GetUID()) }, k)
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

// deletionKeys is the packed default order of children
// (packDeletionKeys), the named ones first, and the facts read of the
// children when no memo kept them. What Primary holds is not kept: a tie
// is decided by the creation time and UID alone (compareTie), then the
// input position.
type deletionKeys struct {
	order []partialsort.Entry
	read  []deletionFacts
}

// deletionKeysPool holds the buffers of scale-downs done: at 10,000
// children they are up to 400 KiB, which each scale-down would otherwise
// leave to the collector, whose cycles over a heap of 10,000 children were
// a fifth of the scale-down.
var deletionKeysPool sync.Pool

// newDeletionKeys returns buffers for n children, with room to read their
// facts when read is set: with the memo's facts, that room is not taken.
func newDeletionKeys(n int, read bool) *deletionKeys {
	d, _ := deletionKeysPool.Get().(*deletionKeys)
	if d == nil {
		d = &deletionKeys{}
	}
	if cap(d.order) < n {
		d.order = make([]partialsort.Entry, 0, n)
	}
	if read && cap(d.read) < n {
		d.read = make([]deletionFacts, 0, n)
	}
	d.order, d.read = d.order[:0], d.read[:0]
	return d
}

// packDeletionKeys fills d's order with the packed keys of children, whose
// facts and readiness are facts.of(i) and ready[i], the named ones first.
func packDeletionKeys[C Object](d *deletionKeys, children []C, facts *factsView, ready []bool, named map[string]bool) {
	n := len(children)
	ready = ready[:n]
	newest := int64(math.MinInt64)
	for i := range n {
		newest = max(newest, facts.of(int32(i)).sec)
	}
	d.order = d.order[:n]
	order := d.order
	for i := range order {
		f := facts.of(int32(i))
		p := 1<<namedShift | uint64(uint32(f.cost)^costSignFlip)<<costShift
		if ready[i] {
			p |= 1 << readyShift
		}
		// newest is the largest second, so only an overflow, between
		// times billions of years apart, makes the count negative.
		if back := newest - f.sec; back >= 0 && back < createdMax {
			p |= uint64(back)
		} else {
			p |= createdMax
		}
		order[i] = partialsort.Entry{Primary: p, Pos: int32(i)}
	}
	// Most scale-downs name no child: the names are not read then.
	if len(named) > 0 {
		for i, c := range children {
			if named[c.GetName()] {
				order[i].Primary &^= 1 << namedShift
			}
		}
	}
}

// first returns the positions of the first k children in deletion order,
// facts being those packed and uidOf(i) child i's UID. It is called once:
// it gives d's buffers back to the pool.
func (d *deletionKeys) first(facts *factsView, uidOf func(int32) string, k int) []int {
	s := partialsort.Sorter{Order: d.order, Tie: func(a, b int32) bool {
		if c := facts.of(a).compareTie(facts.of(b)); c != 0 {
			return c < 0
		}
		if c := strings.Compare(uidOf(a), uidOf(b)); c != 0 {
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
