package workqueue

import (
	"cmp"
	"container/heap"
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
	heap  failureHeap[T]
	clock uint64 // orders failures in time, for the tie-break
}

type failureEntry[T comparable] struct {
	item  T
	count int
	last  uint64
}

func newFailures[T comparable](maxTracked int) failures[T] {
	return failures[T]{max: maxTracked, heap: failureHeap[T]{index: make(map[T]int)}}
}

// incr records one more failure of item and returns the count before it.
func (f *failures[T]) incr(item T) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clock++
	h := &f.heap
	if k, ok := h.index[item]; ok {
		e := &h.entries[k]
		before := e.count
		e.count++
		e.last = f.clock
		heap.Fix(h, k)
		return before
	}
	if h.Len() >= f.max {
		heap.Remove(h, 0)
	}
	h.index[item] = h.Len()
	h.entries = append(h.entries, failureEntry[T]{item: item, count: 1, last: f.clock})
	heap.Fix(h, h.Len()-1)
	return 0
}

func (f *failures[T]) get(item T) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k, ok := f.heap.index[item]; ok {
		return f.heap.entries[k].count
	}
	return 0
}

func (f *failures[T]) forget(item T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k, ok := f.heap.index[item]; ok {
		heap.Remove(&f.heap, k)
	}
}

func (f *failures[T]) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.heap.Len()
}

// failureHeap is container/heap's min-heap of the tracked items, fewest
// failures first, then least recently failed; index maps each item to its
// position so it can be found, fixed and removed in O(log n).
type failureHeap[T comparable] struct {
	index   map[T]int
	entries []failureEntry[T]
}

func (h *failureHeap[T]) Len() int { return len(h.entries) }

func (h *failureHeap[T]) Less(a, b int) bool {
	x, y := &h.entries[a], &h.entries[b]
	if c := cmp.Compare(x.count, y.count); c != 0 {
		return c < 0
	}
	return x.last < y.last
}

func (h *failureHeap[T]) Swap(a, b int) {
	h.entries[a], h.entries[b] = h.entries[b], h.entries[a]
	h.index[h.entries[a].item] = a
	h.index[h.entries[b].item] = b
}

// Push appends an entry, for container/heap. incr appends and fixes the
// position itself, which spares boxing the entry in an interface.
func (h *failureHeap[T]) Push(x any) {
	e := x.(failureEntry[T])
	h.index[e.item] = len(h.entries)
	h.entries = append(h.entries, e)
}

// Pop drops the last entry, for container/heap's Remove; nothing reads the
// result, so nothing is boxed.
func (h *failureHeap[T]) Pop() any {
	last := len(h.entries) - 1
	delete(h.index, h.entries[last].item)
	h.entries[last] = failureEntry[T]{} // keep no reference to the item
	h.entries = h.entries[:last]
	return nil
}
