package workqueue

import "math"

// Item states. An item is in the store exactly while at least one bit is
// set. Valid combinations: queued; waiting; processing; processing|dirty;
// processing|waiting. Dirty and waiting exclude each other: dirty means
// "ready again at Done", waiting means "ready at a deadline".
const (
	stQueued     uint8 = 1 << iota // in a ready list, not handed out
	stWaiting                      // in the delay heap
	stProcessing                   // handed out by Get, Done not called yet
	stDirty                        // added again while processing
)

const (
	nilIdx    = int32(-1)
	slabShift = 8
	slabSize  = 1 << slabShift
	slabMask  = slabSize - 1
)

// node is the whole per-item state: 40 bytes for a string key. The two
// int32 links serve roles that never overlap:
//   - queued: prev/next are the ready-list links;
//   - waiting: next is the index in the delay heap;
//   - processing: prev is the index in the in-flight list (metrics only).
//
// t1 is the deadline while waiting and the time the item became ready
// otherwise, in nanoseconds since the queue's epoch (monotonic clock).
type node[T comparable] struct {
	item  T
	t1    int64
	prev  int32
	next  int32
	prio  int32
	state uint8
}

// store holds one node per item and finds it through a Go map from item to
// node index. Nodes live in fixed-size blocks that never move, so growth
// copies no nodes and a *node stays valid while the lock is held; freed nodes
// are reused, so a steady queue allocates nothing.
type store[T comparable] struct {
	index  map[T]int32
	blocks [][]node[T]
	free   int32 // head of the free list, linked through next
	used   int32 // nodes ever handed out
}

func (s *store[T]) init() {
	s.index = make(map[T]int32)
	s.free = nilIdx
}

func (s *store[T]) at(i int32) *node[T] {
	return &s.blocks[i>>slabShift][i&slabMask]
}

// find returns the item's node and its index, or nil when absent.
func (s *store[T]) find(item T) (int32, *node[T]) {
	i, ok := s.index[item]
	if !ok {
		return nilIdx, nil
	}
	return i, s.at(i)
}

// insert gives item a fresh node. It reports false at the 2^31 node limit,
// which callers treat like a full queue.
func (s *store[T]) insert(item T) (int32, *node[T], bool) {
	var i int32
	if s.free != nilIdx {
		i = s.free
		s.free = s.at(i).next
	} else {
		if s.used == math.MaxInt32 {
			return nilIdx, nil, false
		}
		if int(s.used)>>slabShift == len(s.blocks) {
			s.blocks = append(s.blocks, make([]node[T], slabSize))
		}
		i = s.used
		s.used++
	}
	s.index[item] = i
	n := s.at(i)
	n.item = item
	n.prev, n.next = nilIdx, nilIdx
	return i, n, true
}

// release forgets the item held in node i. The node is zeroed so the queue
// keeps no reference to the item (the leak of kubernetes#104991).
func (s *store[T]) release(i int32, n *node[T]) {
	delete(s.index, n.item)
	*n = node[T]{next: s.free}
	s.free = i
}

func (s *store[T]) len() int { return len(s.index) }
