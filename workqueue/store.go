package workqueue

import "math"

// Item states. An item is in the index exactly while at least one bit is set.
// Valid combinations: queued; waiting; processing; processing|dirty;
// processing|waiting. Dirty and waiting exclude each other: dirty means
// "ready again as soon as Done", waiting means "ready at a deadline".
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

// node is the whole per-item state. The two int32 links are shared between
// roles that never overlap, which keeps a queued string key at 48 bytes:
//   - queued: prev/next are the ready-list links;
//   - waiting: next is the index in the delay heap;
//   - processing: prev is the index in the in-flight list (metrics only).
//
// t1 is the deadline while waiting and the time the item became ready
// otherwise; t2 is when processing started. Both are nanoseconds since the
// queue's epoch, read from the monotonic clock.
type node[T comparable] struct {
	item  T
	t1    int64
	t2    int64
	prev  int32
	next  int32
	prio  int32
	state uint8
}

// store maps items to nodes kept in fixed-size blocks. Blocks never move,
// so growth copies nothing and wastes at most one block; freed nodes are
// reused, so a steady queue allocates nothing.
type store[T comparable] struct {
	index  map[T]int32
	blocks [][]node[T]
	free   int32
	used   int32
}

func (s *store[T]) init() {
	s.index = make(map[T]int32)
	s.free = nilIdx
}

func (s *store[T]) at(i int32) *node[T] {
	return &s.blocks[i>>slabShift][i&slabMask]
}

func (s *store[T]) lookup(item T) (int32, *node[T]) {
	i, ok := s.index[item]
	if !ok {
		return nilIdx, nil
	}
	return i, s.at(i)
}

// alloc returns a fresh node for item and indexes it. It reports false when
// the 2^31 node limit is reached, which callers treat like a full queue.
func (s *store[T]) alloc(item T) (int32, *node[T], bool) {
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
	n := s.at(i)
	n.item = item
	n.prev, n.next = nilIdx, nilIdx
	s.index[item] = i
	return i, n, true
}

// release forgets the item. The node is zeroed so the queue does not keep
// the item reachable (the leak of kubernetes#104991).
func (s *store[T]) release(i int32, n *node[T]) {
	delete(s.index, n.item)
	*n = node[T]{next: s.free}
	s.free = i
}

func (s *store[T]) len() int { return len(s.index) }
