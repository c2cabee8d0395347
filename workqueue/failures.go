package workqueue

import (
	"cmp"
	"sync"
)

// failures is the capped per-item failure count shared by the per-item
// limiters. At the cap, a new item evicts the item with the fewest failures,
// the least recently failed among equals: its backoff is the shortest, so
// forgetting it costs the least, and an item deep in a long backoff is never
// reset to the base delay by a flood of new ones. A min-heap ordered that
// way finds the victim in O(log n).
type failures[T comparable] struct {
	mu    sync.Mutex
	max   int
	index map[T]int // item -> position in heap
	heap  []failureEntry[T]
	clock uint64 // orders failures in time, for the tie-break
}

type failureEntry[T comparable] struct {
	item  T
	count int
	last  uint64
}

func newFailures[T comparable](maxTracked int) failures[T] {
	return failures[T]{max: maxTracked, index: make(map[T]int)}
}

// incr records one more failure of item and returns the count before it.
func (f *failures[T]) incr(item T) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clock++
	if k, ok := f.index[item]; ok {
		e := &f.heap[k]
		before := e.count
		e.count++
		e.last = f.clock
		f.down(k) // the entry only grew
		return before
	}
	if len(f.heap) >= f.max {
		f.remove(0)
	}
	f.heap = append(f.heap, failureEntry[T]{item: item, count: 1, last: f.clock})
	f.index[item] = len(f.heap) - 1
	f.up(len(f.heap) - 1)
	return 0
}

func (f *failures[T]) get(item T) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k, ok := f.index[item]; ok {
		return f.heap[k].count
	}
	return 0
}

func (f *failures[T]) forget(item T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k, ok := f.index[item]; ok {
		f.remove(k)
	}
}

func (f *failures[T]) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.heap)
}

func (f *failures[T]) remove(k int) {
	last := len(f.heap) - 1
	delete(f.index, f.heap[k].item)
	if k != last {
		f.heap[k] = f.heap[last]
		f.index[f.heap[k].item] = k
	}
	f.heap[last] = failureEntry[T]{} // keep no reference to the item
	f.heap = f.heap[:last]
	if k != last {
		f.down(k)
		f.up(k)
	}
}

func (f *failures[T]) less(a, b int) bool {
	x, y := &f.heap[a], &f.heap[b]
	if c := cmp.Compare(x.count, y.count); c != 0 {
		return c < 0
	}
	return x.last < y.last
}

func (f *failures[T]) swap(a, b int) {
	f.heap[a], f.heap[b] = f.heap[b], f.heap[a]
	f.index[f.heap[a].item] = a
	f.index[f.heap[b].item] = b
}

func (f *failures[T]) up(k int) {
	for k > 0 {
		p := (k - 1) / 2
		if !f.less(k, p) {
			return
		}
		f.swap(k, p)
		k = p
	}
}

func (f *failures[T]) down(k int) {
	n := len(f.heap)
	for {
		c := 2*k + 1
		if c >= n {
			return
		}
		if r := c + 1; r < n && f.less(r, c) {
			c = r
		}
		if !f.less(c, k) {
			return
		}
		f.swap(k, c)
		k = c
	}
}
