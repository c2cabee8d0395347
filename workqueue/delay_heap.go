package workqueue

import "container/heap"

// delayHeap is the queue seen as container/heap's min-heap of its waiting
// nodes, earliest deadline (t1) first. q.heap holds their indices in the
// store, and each waiting node keeps its own position in next, so AddAfter
// can move or cancel it in O(log n). It is a conversion of the queue, not a
// copy: (*delayHeap[T])(q) costs nothing and keeps the zero Queue usable.
type delayHeap[T comparable] Queue[T]

func (h *delayHeap[T]) Len() int { return len(h.heap) }

func (h *delayHeap[T]) Less(a, b int) bool {
	return h.s.at(h.heap[a]).t1 < h.s.at(h.heap[b]).t1
}

func (h *delayHeap[T]) Swap(a, b int) {
	h.heap[a], h.heap[b] = h.heap[b], h.heap[a]
	h.s.at(h.heap[a]).next = int32(a)
	h.s.at(h.heap[b]).next = int32(b)
}

// Push appends a node index, for container/heap. heapPush appends and fixes
// the position itself, which spares boxing the index in an interface.
func (h *delayHeap[T]) Push(x any) {
	i := x.(int32)
	h.s.at(i).next = int32(len(h.heap))
	h.heap = append(h.heap, i)
}

// Pop drops the last index, for container/heap's Remove; nothing reads the
// result, so nothing is boxed.
func (h *delayHeap[T]) Pop() any {
	h.heap = h.heap[:len(h.heap)-1]
	return nil
}

// heapPush adds node i to the delay heap and makes sure the loop will wake
// by its deadline. It never blocks: the wake-up is a non-blocking send.
func (q *Queue[T]) heapPush(i int32, n *node[T]) {
	n.state |= stWaiting
	n.next = int32(len(q.heap))
	q.heap = append(q.heap, i)
	heap.Fix((*delayHeap[T])(q), int(n.next))
	if q.m != nil && q.m.waiting != nil {
		q.m.waiting.Inc()
	}
	q.kickLoop(n.t1)
}

// heapFix restores the order after n's deadline changed.
func (q *Queue[T]) heapFix(n *node[T]) {
	heap.Fix((*delayHeap[T])(q), int(n.next))
	q.kickLoop(n.t1)
}

// heapRemove takes a waiting node out of the heap. The loop may then wake
// for nothing, which is harmless.
func (q *Queue[T]) heapRemove(n *node[T]) {
	heap.Remove((*delayHeap[T])(q), int(n.next))
	n.state &^= stWaiting
	n.next = nilIdx
	if q.m != nil && q.m.waiting != nil {
		q.m.waiting.Dec()
	}
}
