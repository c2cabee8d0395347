package podranking

import "math/bits"

// selectK rearranges idx so that idx[:k] holds the k first elements under
// o.cmp, in no particular order. It is a quickselect with median-of-three
// pivots, falling back to a heap after too many unbalanced rounds so the worst
// case stays O(n log k). Every loop is bounds-checked by index rather than by
// sentinels, so even a comparator that is not a strict weak order cannot
// make it run off the slice.
func (o *order) selectK(idx []entry, k int) {
	if k <= 0 || k >= len(idx) {
		return
	}
	lo, hi := 0, len(idx)
	budget := 2 * bits.Len(uint(len(idx)))
	for hi-lo > 12 {
		if budget == 0 {
			o.heapSelect(idx[lo:hi], k-lo)
			return
		}
		budget--
		p := o.partition(idx, lo, hi)
		switch {
		case p == k || p == k-1:
			return
		case k < p:
			hi = p
		default:
			lo = p + 1
		}
	}
	// A short range: insertion sort settles it.
	for i := lo + 1; i < hi; i++ {
		for j := i; j > lo && o.cmp(idx[j], idx[j-1]) < 0; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
}

// partition places a median-of-three pivot at its final position p within
// [lo, hi): everything before it compares lower, everything after not lower.
func (o *order) partition(idx []entry, lo, hi int) int {
	mid := lo + (hi-lo)/2
	last := hi - 1
	if o.cmp(idx[mid], idx[lo]) < 0 {
		idx[mid], idx[lo] = idx[lo], idx[mid]
	}
	if o.cmp(idx[last], idx[mid]) < 0 {
		idx[last], idx[mid] = idx[mid], idx[last]
		if o.cmp(idx[mid], idx[lo]) < 0 {
			idx[mid], idx[lo] = idx[lo], idx[mid]
		}
	}
	idx[lo], idx[mid] = idx[mid], idx[lo]
	pivot := idx[lo]
	store := lo + 1
	for i := lo + 1; i < hi; i++ {
		if o.cmp(idx[i], pivot) < 0 {
			idx[i], idx[store] = idx[store], idx[i]
			store++
		}
	}
	idx[lo], idx[store-1] = idx[store-1], idx[lo]
	return store - 1
}

// heapSelect keeps the k first elements of a in a max-heap at a[:k].
func (o *order) heapSelect(a []entry, k int) {
	if k <= 0 || k >= len(a) {
		return
	}
	h := a[:k]
	for i := k/2 - 1; i >= 0; i-- {
		o.siftDown(h, i)
	}
	for i := k; i < len(a); i++ {
		if o.cmp(a[i], h[0]) < 0 {
			h[0], a[i] = a[i], h[0]
			o.siftDown(h, 0)
		}
	}
}

func (o *order) siftDown(h []entry, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		big := l
		if r := l + 1; r < len(h) && o.cmp(h[r], h[l]) > 0 {
			big = r
		}
		if o.cmp(h[big], h[i]) <= 0 {
			return
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}
