// Package partialsort is Go's sort.Sort (the pattern-defeating quicksort
// of the sort package, Go 1.19 and later) run only as far as the first k
// positions need, over entries whose order is mostly one integer. The set
// cores pick the children to delete first with it: podranking because
// upstream's pod order is not a total order, so only sort.Sort's own
// decisions give upstream's answer, and childset because, its order being
// total, the first k of a sort are the first k of this one at a fraction
// of the comparisons.
//
// Upstream sorts every pod with sort.Sort and keeps the first diff; its
// Less is not a total order (pods ready in one second next to pods of
// another second of the same log2 bucket, or restarts against UID order,
// make ties and cycles), so which pods come first depends on the exact
// sequence of comparisons. A heap, a quickselect or a stable sort would
// answer differently on such inputs. Sorter therefore makes exactly
// sort.Sort's decisions: the same insertion sort below 13 elements, the
// same pivots (static, median of three, Tukey's ninther) with the same swap
// counting and sortedness hints, the same partial insertion sort, the same
// pattern breaking with the xorshift generator seeded by the length, the
// same heapsort fallback once bits.Len(n) unbalanced partitions are spent,
// the same equal-element partition, and the same wasBalanced and
// wasPartitioned bookkeeping. TestSortPrefixMatchesSortSort pins it to the
// sort package of the Go release that builds it, for every k, on arbitrary
// relations; a release that changes sort.Sort fails that test.
//
// What it leaves out is every segment that cannot change positions below
// k. A segment of the quicksort is a range [a, b) whose processing, with
// all its sub-segments, permutes elements. Its writes usually stay inside
// [a, b), with one exception: partialInsertionSort shifts a smaller element
// left as far as the start of the whole slice, not only to a, and the
// equal-partition test reads position a-1. Both stop at the nearest real
// pivot p on the segment's left (the element a partition put in its final
// place): every element right of p was put there because it is not less
// than p, and nothing writes p again, so Less(p+1, p) is false and no shift
// crosses p. A segment therefore writes only inside [p+1, b). It is skipped
// when p+1 >= k. A segment that starts at or beyond k is not enough: after
// an equal-partition step the remainder starts right of elements that are
// not pivots, and its shifts can reach below its start (shiftBelowStartCase
// in the tests is such an input).
//
// Because a skipped segment's range is read and written by no other
// segment, sort.Sort would have processed it from exactly the state it is
// in when skipped. Sorter keeps skipped segments with their loop state, so
// a later call for a larger k resumes them and still makes sort.Sort's
// decisions.
//
// It sorts a permutation of positions, not the caller's keys: an entry is
// the position and the leading rules of its key packed into one integer,
// so swaps move 16 bytes, most comparisons read nothing else, and the keys
// stay in input order.
package partialsort

import "math/bits"

// insertionSortMax is sort.Sort's threshold: ranges of at most this many
// elements are insertion sorted.
const insertionSortMax = 12

// pdqSegment is one range pdqsort has still to sort, with the loop state it
// carried when the range was skipped.
type pdqSegment struct {
	a, b, limit                 int
	wasBalanced, wasPartitioned bool
}

// Entry is one element of the sorted permutation: the input position of a
// key and the leading rules of the key packed into one integer, so that
// most comparisons read neither the key nor another cache line.
type Entry struct {
	// Primary orders entries: the smaller goes first. Entries of equal
	// Primary are ordered by the Sorter's Tie.
	Primary uint64
	Pos     int32
}

// Sorter sorts Order, a permutation of positions into the caller's keys,
// by Less: the smaller Primary first, and Tie between equal ones.
type Sorter struct {
	Order []Entry
	// Tie is Less for the keys at positions a and b, whose Primary is
	// equal. It need not be an order: the sort makes sort.Sort's decisions
	// on any relation.
	Tie func(a, b int32) bool
	// pending holds the segments skipped so far; started is set once the
	// whole range was queued.
	pending []pdqSegment
	started bool
}

// SortPrefix makes Order[:k] what sort.Sort would leave there. A later
// call with a larger k resumes where this one stopped.
func (s *Sorter) SortPrefix(k int) {
	n := len(s.Order)
	if !s.started {
		s.started = true
		if n <= 1 {
			return
		}
		// A sort skips a few segments per level it descends.
		s.pending = make([]pdqSegment, 0, 2*bits.Len(uint(n)))
		s.pdqsort(pdqSegment{a: 0, b: n, limit: bits.Len(uint(n)), wasBalanced: true, wasPartitioned: true}, k)
		return
	}
	if len(s.pending) == 0 {
		return
	}
	todo := s.pending
	s.pending = make([]pdqSegment, 0, len(todo))
	for _, g := range todo {
		s.pdqsort(g, k)
	}
}

// less is Less on the keys at positions i and j of Order. The Primary
// comparison, which decides most, is inlined here.
func (s *Sorter) less(i, j int) bool {
	if pa, pb := s.Order[i].Primary, s.Order[j].Primary; pa != pb {
		return pa < pb
	}
	return s.Tie(s.Order[i].Pos, s.Order[j].Pos)
}

func (s *Sorter) swap(i, j int) { s.Order[i], s.Order[j] = s.Order[j], s.Order[i] }

// pdqsort is sort.Sort's pdqsort loop on g, skipping every segment whose
// writes lie at or beyond k (see the file comment). The nearest real pivot
// left of the loop's range is tracked in pivotLeft (-1: none), so that the
// range is skipped when pivotLeft+1 >= k.
func (s *Sorter) pdqsort(g pdqSegment, k int) {
	a, b, limit := g.a, g.b, g.limit
	wasBalanced, wasPartitioned := g.wasBalanced, g.wasPartitioned
	// A queued segment always starts right of a real pivot, or at 0.
	pivotLeft := a - 1
	for {
		if pivotLeft+1 >= k {
			s.pending = append(s.pending, pdqSegment{a, b, limit, wasBalanced, wasPartitioned})
			return
		}
		length := b - a
		if length <= insertionSortMax {
			s.insertionSort(a, b)
			return
		}
		if limit == 0 {
			s.heapSort(a, b)
			return
		}
		if !wasBalanced {
			s.breakPatterns(a, b)
			limit--
		}
		pivot, hint := s.choosePivot(a, b)
		if hint == hintDecreasing {
			s.reverse(a, b)
			pivot = (b - 1) - (pivot - a)
			hint = hintIncreasing
		}
		if wasBalanced && wasPartitioned && hint == hintIncreasing && s.partialInsertionSort(a, b) {
			return
		}
		if a > 0 && !s.less(a-1, pivot) {
			// The elements equal to the pivot go left and are not pivots:
			// pivotLeft stays.
			a = s.partitionEqual(a, b, pivot)
			continue
		}
		mid, alreadyPartitioned := s.partition(a, b, pivot)
		wasPartitioned = alreadyPartitioned
		leftLen, rightLen := mid-a, b-mid
		balanceThreshold := length / 8
		if leftLen < rightLen {
			wasBalanced = leftLen >= balanceThreshold
			s.pdqsortFresh(a, mid, limit, pivotLeft, k)
			a, pivotLeft = mid+1, mid
		} else {
			wasBalanced = rightLen >= balanceThreshold
			s.pdqsortFresh(mid+1, b, limit, mid, k)
			b = mid
		}
	}
}

// pdqsortFresh is sort.Sort's recursive call on [a, b), which starts with
// fresh balance and partition flags.
func (s *Sorter) pdqsortFresh(a, b, limit, pivotLeft, k int) {
	if pivotLeft+1 >= k {
		s.pending = append(s.pending, pdqSegment{a, b, limit, true, true})
		return
	}
	s.pdqsort(pdqSegment{a, b, limit, true, true}, k)
}

func (s *Sorter) insertionSort(a, b int) {
	for i := a + 1; i < b; i++ {
		for j := i; j > a && s.less(j, j-1); j-- {
			s.swap(j, j-1)
		}
	}
}

// siftDown restores the max-heap of [lo, hi) rooted at lo, offset by first.
func (s *Sorter) siftDown(lo, hi, first int) {
	root := lo
	for {
		child := 2*root + 1
		if child >= hi {
			return
		}
		if child+1 < hi && s.less(first+child, first+child+1) {
			child++
		}
		if !s.less(first+root, first+child) {
			return
		}
		s.swap(first+root, first+child)
		root = child
	}
}

func (s *Sorter) heapSort(a, b int) {
	n := b - a
	for i := (n - 1) / 2; i >= 0; i-- {
		s.siftDown(i, n, a)
	}
	for i := n - 1; i >= 0; i-- {
		s.swap(a, a+i)
		s.siftDown(0, i, a)
	}
}

// partition moves the elements less than the pivot left of it and the rest
// right of it, and reports whether nothing had to move.
func (s *Sorter) partition(a, b, pivot int) (int, bool) {
	s.swap(a, pivot)
	i, j := a+1, b-1
	for i <= j && s.less(i, a) {
		i++
	}
	for i <= j && !s.less(j, a) {
		j--
	}
	if i > j {
		s.swap(j, a)
		return j, true
	}
	s.swap(i, j)
	i++
	j--
	for {
		for i <= j && s.less(i, a) {
			i++
		}
		for i <= j && !s.less(j, a) {
			j--
		}
		if i > j {
			break
		}
		s.swap(i, j)
		i++
		j--
	}
	s.swap(j, a)
	return j, false
}

// partitionEqual moves the elements not greater than the pivot to the front
// and returns where the greater ones start.
func (s *Sorter) partitionEqual(a, b, pivot int) int {
	s.swap(a, pivot)
	i, j := a+1, b-1
	for {
		for i <= j && !s.less(a, i) {
			i++
		}
		for i <= j && s.less(a, j) {
			j--
		}
		if i > j {
			return i
		}
		s.swap(i, j)
		i++
		j--
	}
}

// partialInsertionSort fixes up to five adjacent inversions in ranges of 50
// or more and reports whether [a, b) ended sorted. Its left shift runs down
// to position 1, as sort.Sort's does.
func (s *Sorter) partialInsertionSort(a, b int) bool {
	const (
		maxSteps         = 5
		shortestShifting = 50
	)
	i := a + 1
	for range maxSteps {
		for i < b && !s.less(i, i-1) {
			i++
		}
		if i == b {
			return true
		}
		if b-a < shortestShifting {
			return false
		}
		s.swap(i, i-1)
		if i-a >= 2 {
			for j := i - 1; j >= 1 && s.less(j, j-1); j-- {
				s.swap(j, j-1)
			}
		}
		if b-i >= 2 {
			for j := i + 1; j < b && s.less(j, j-1); j++ {
				s.swap(j, j-1)
			}
		}
	}
	return false
}

// breakPatterns swaps three elements around the middle of [a, b) with
// positions from an xorshift generator seeded by the length.
func (s *Sorter) breakPatterns(a, b int) {
	length := b - a
	if length < 8 {
		return
	}
	random := uint64(length)
	mask := uint(1)<<bits.Len(uint(length)) - 1
	for idx := a + (length/4)*2 - 1; idx <= a+(length/4)*2+1; idx++ {
		random ^= random << 13
		random ^= random >> 7
		random ^= random << 17
		other := int(uint(random) & mask)
		if other >= length {
			other -= length
		}
		s.swap(idx, a+other)
	}
}

// Sortedness hints of choosePivot.
const (
	hintUnknown = iota
	hintIncreasing
	hintDecreasing
)

// choosePivot picks the pivot of [a, b): the middle-ish element below 8,
// the median of three below 50, else Tukey's ninther; the number of swaps
// the medians made hints at an increasing (none) or decreasing (all)
// range.
func (s *Sorter) choosePivot(a, b int) (int, int) {
	const (
		shortestNinther = 50
		maxSwaps        = 4 * 3
	)
	l := b - a
	swaps := 0
	i, j, k := a+l/4*1, a+l/4*2, a+l/4*3
	if l >= 8 {
		if l >= shortestNinther {
			i = s.median(i-1, i, i+1, &swaps)
			j = s.median(j-1, j, j+1, &swaps)
			k = s.median(k-1, k, k+1, &swaps)
		}
		j = s.median(i, j, k, &swaps)
	}
	switch swaps {
	case 0:
		return j, hintIncreasing
	case maxSwaps:
		return j, hintDecreasing
	default:
		return j, hintUnknown
	}
}

// order2 returns x and y ordered so that y is not less than x, counting a
// swap when it had to exchange them.
func (s *Sorter) order2(x, y int, swaps *int) (int, int) {
	if s.less(y, x) {
		*swaps++
		return y, x
	}
	return x, y
}

// median returns the middle one of x, y and z by three order2 steps.
func (s *Sorter) median(x, y, z int, swaps *int) int {
	x, y = s.order2(x, y, swaps)
	y, _ = s.order2(y, z, swaps)
	_, y = s.order2(x, y, swaps)
	return y
}

func (s *Sorter) reverse(a, b int) {
	for i, j := a, b-1; i < j; i, j = i+1, j-1 {
		s.swap(i, j)
	}
}
