package workqueue

import (
	"hash/maphash"
	"math"
)

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
	minSlots  = 64
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

// store holds the nodes and finds them by item. It is an open-addressing
// table of 8-byte slots (32 hash bits and the node index) over nodes kept in
// fixed-size blocks. Compared with a map[T]*node or map[T]int32 this saves
// the key copy and the map's per-slot overhead, the slots hold no pointers
// for the collector to scan, and blocks never move, so growth copies no
// nodes. Freed nodes are reused, so a steady queue allocates nothing.
type store[T comparable] struct {
	seed   maphash.Seed
	slots  []uint64 // 0 empty, else hash<<32 | index+1; linear probing
	mask   uint32
	count  int
	blocks [][]node[T]
	free   int32
	used   int32
}

func (s *store[T]) init() {
	s.seed = maphash.MakeSeed()
	s.slots = make([]uint64, minSlots)
	s.mask = minSlots - 1
	s.free = nilIdx
}

func (s *store[T]) at(i int32) *node[T] {
	return &s.blocks[i>>slabShift][i&slabMask]
}

func (s *store[T]) hash(item T) uint32 {
	return uint32(maphash.Comparable(s.seed, item))
}

// find returns the item's hash and slot, and its node when present. When
// absent, slot is where insert will put it.
func (s *store[T]) find(item T) (h, slot uint32, i int32, n *node[T]) {
	h = s.hash(item)
	for j := h & s.mask; ; j = (j + 1) & s.mask {
		e := s.slots[j]
		if e == 0 {
			return h, j, nilIdx, nil
		}
		if uint32(e>>32) == h {
			i = int32(uint32(e)) - 1
			if n = s.at(i); n.item == item {
				return h, j, i, n
			}
		}
	}
}

func (s *store[T]) lookup(item T) (int32, *node[T]) {
	_, _, i, n := s.find(item)
	return i, n
}

// insert indexes a fresh node for item at the slot find returned. It
// reports false at the 2^31 node limit, which callers treat like a full
// queue.
func (s *store[T]) insert(item T, h, slot uint32) (int32, *node[T], bool) {
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
	if (s.count+1)*4 > len(s.slots)*3 { // keep the load under 3/4
		s.grow()
		slot = s.emptySlot(h)
	}
	s.slots[slot] = uint64(h)<<32 | uint64(i+1)
	s.count++
	n := s.at(i)
	n.item = item
	n.prev, n.next = nilIdx, nilIdx
	return i, n, true
}

func (s *store[T]) emptySlot(h uint32) uint32 {
	j := h & s.mask
	for s.slots[j] != 0 {
		j = (j + 1) & s.mask
	}
	return j
}

// grow doubles the table. Slots carry their hash, so no key is rehashed.
func (s *store[T]) grow() {
	old := s.slots
	s.slots = make([]uint64, 2*len(old))
	s.mask = uint32(len(s.slots) - 1)
	for _, e := range old {
		if e != 0 {
			s.slots[s.emptySlot(uint32(e>>32))] = e
		}
	}
}

// slotOf finds the slot that points at node i.
func (s *store[T]) slotOf(i int32, n *node[T]) uint32 {
	want := uint64(i + 1)
	j := s.hash(n.item) & s.mask
	for uint32(s.slots[j]) != uint32(want) {
		j = (j + 1) & s.mask
	}
	return j
}

// release forgets the item held in node i at slot. The node is zeroed so
// the queue keeps no reference to the item (the leak of kubernetes#104991).
func (s *store[T]) release(slot uint32, i int32, n *node[T]) {
	s.removeSlot(slot)
	s.count--
	*n = node[T]{next: s.free}
	s.free = i
}

// removeSlot empties slot j with backward-shift deletion, so linear probing
// needs no tombstones and lookups never slow down with churn.
func (s *store[T]) removeSlot(j uint32) {
	for {
		s.slots[j] = 0
		k := j
		for {
			k = (k + 1) & s.mask
			e := s.slots[k]
			if e == 0 {
				return
			}
			// The entry at k may fill the hole at j if j lies on its probe
			// path, i.e. no closer to k than its home slot.
			home := uint32(e>>32) & s.mask
			if (k-home)&s.mask >= (k-j)&s.mask {
				s.slots[j] = e
				j = k
				break
			}
		}
	}
}

func (s *store[T]) len() int { return s.count }
