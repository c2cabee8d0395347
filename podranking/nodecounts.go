package podranking

import (
	"sync"
	"unsafe"

	v1 "k8s.io/api/core/v1"

	"github.com/ctrlkit/ctrlkit/podstate"
)

// countOnNodes is rule 5's input, upstream's
// getPodsRankedByRelatedPodsOnSameNode. Each node of a pod of filtered gets a
// slot; visit sees every pod of filtered with its node's slot (-1 for a nil
// pod), and the returned counts hold, per slot, the active pods of related
// on that node. Related pods on nodes without a pod of filtered are never
// stored.
//
// The cost is reading pods, not counting: a pod is more than a kilobyte, and
// its phase, deletion timestamp and node name (and the name's bytes) sit in
// separate cache lines, which a large set of pods does not keep in the
// cache. Each pod of filtered is read anyway while it is visited, so a
// related pod that is also a pod of filtered, found by its pointer, is
// counted from what its visit saw instead of being read again. When
// filtered is a prefix of related, as when a set of pods is ranked among
// itself, its pods are counted as they are visited; otherwise the pointers
// of filtered go into a table, and only the related pods not in it (a
// sibling's, during a rollout) are read, in a loop without calls, so that
// the processor waits for many of them at once rather than one at a time.
// For the same reason the pods of filtered are read ahead of their visits
// a run at a time, and the related pods' node names before their lookups
// (warm.go).
func countOnNodes(filtered, related []*v1.Pod, visit func(i int, p *v1.Pod, slot int32)) []int {
	slots := getNodeSlots()
	defer putNodeSlots(slots)
	counts := make([]int, 0, min(len(filtered), 64))
	shared := 0
	if len(filtered) > 0 && len(related) >= len(filtered) && &filtered[0] == &related[0] {
		shared = len(filtered)
	}
	var seen *podTable
	if shared == 0 && len(related) > 0 && len(filtered) > 0 {
		seen = getPodTable(filtered)
		defer putPodTable(seen)
	}
	for i, p := range filtered {
		if i%warmRun == 0 {
			warmPods(filtered[i:min(i+warmRun, len(filtered))])
		}
		slot := int32(-1)
		if p != nil {
			s, ok := slots[p.Spec.NodeName]
			if !ok {
				s = int32(len(counts))
				slots[p.Spec.NodeName] = s
				counts = append(counts, 0)
			}
			active := podstate.IsActive(p)
			switch {
			case i < shared:
				if active {
					counts[s]++
				}
			case seen != nil:
				counted := s
				if !active {
					counted = -1
				}
				seen.put(i, counted)
			}
			slot = s
		}
		visit(i, p, slot)
	}
	if seen == nil {
		for _, p := range related[shared:] {
			if podstate.IsActive(p) {
				if s, ok := slots[p.Spec.NodeName]; ok {
					counts[s]++
				}
			}
		}
		return counts
	}
	others := seen.others[:0]
	for _, p := range related {
		if p == nil {
			continue
		}
		if s, ok := seen.get(p); ok {
			if s >= 0 {
				counts[s]++
			}
			continue
		}
		others = append(others, p)
	}
	nodes := seen.nodes[:0]
	for _, p := range others {
		if podstate.IsActive(p) {
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	warmStrings(nodes)
	for _, node := range nodes {
		if s, ok := slots[node]; ok {
			counts[s]++
		}
	}
	seen.others, seen.nodes = others, nodes
	return counts
}

// nodeSlotsPool keeps the maps of node names to slots from one ranking to
// the next: growing a map to the hundreds of nodes of a large set of pods
// allocates it several times over, and a cleared map keeps its room.
var nodeSlotsPool sync.Pool

func getNodeSlots() map[string]int32 {
	if m, ok := nodeSlotsPool.Get().(map[string]int32); ok {
		return m
	}
	return make(map[string]int32)
}

func putNodeSlots(m map[string]int32) {
	clear(m) // drop the names, which belong to the pods
	nodeSlotsPool.Put(m)
}

// podTable finds a pod of filtered by its pointer: an open-addressed table
// with linear probing of positions in filtered, each with the slot its pod
// counts on (-1 when it counts on none). Entries hold no pointers, so the
// table is small (8 bytes an entry, at most half full), the garbage
// collector never scans it, and a pool keeps it, with the scratch space of
// the related pods not in it, from one ranking to the next.
type podTable struct {
	filtered []*v1.Pod
	entries  []podEntry
	mask     uint64
	shift    uint
	others   []*v1.Pod
	nodes    []string
}

// podEntry is one position of filtered, plus one (zero is an empty entry),
// and its slot.
type podEntry struct {
	pos1, slot int32
}

var podTablePool sync.Pool

// getPodTable returns an empty table for the pods of filtered.
func getPodTable(filtered []*v1.Pod) *podTable {
	size, shift := 16, uint(64-4)
	for size < 2*len(filtered) {
		size, shift = size*2, shift-1
	}
	t, _ := podTablePool.Get().(*podTable)
	if t == nil || len(t.entries) < size {
		t = &podTable{entries: make([]podEntry, size), mask: uint64(size - 1), shift: shift}
	}
	// A larger table from an earlier call serves as it is.
	t.filtered = filtered
	return t
}

func putPodTable(t *podTable) {
	clear(t.entries)
	// Drop the pointers, so that a pooled table keeps no pod alive.
	clear(t.others)
	clear(t.nodes)
	t.filtered = nil
	podTablePool.Put(t)
}

// home is the first probe of p: the top bits of its address multiplied by
// 2^64 divided by the golden ratio (Fibonacci hashing), which spreads
// addresses that differ by a multiple of the pods' size over the table. It
// reads the address only, never the pod; Go never moves heap objects, and
// filtered holds every pod in the table alive while the table is in use.
func (t *podTable) home(p *v1.Pod) uint64 {
	return uint64(uintptr(unsafe.Pointer(p))) * 0x9e3779b97f4a7c15 >> t.shift
}

// put records position i of filtered, unless its pod is already there.
func (t *podTable) put(i int, slot int32) {
	p := t.filtered[i]
	for h := t.home(p); ; h = (h + 1) & t.mask {
		e := &t.entries[h]
		if e.pos1 == 0 {
			e.pos1, e.slot = int32(i+1), slot
			return
		}
		if t.filtered[e.pos1-1] == p {
			return
		}
	}
}

func (t *podTable) get(p *v1.Pod) (int32, bool) {
	for h := t.home(p); ; h = (h + 1) & t.mask {
		e := &t.entries[h]
		if e.pos1 == 0 {
			return 0, false
		}
		if t.filtered[e.pos1-1] == p {
			return e.slot, true
		}
	}
}
