package podranking

import (
	"sync/atomic"
	"unsafe"

	v1 "k8s.io/api/core/v1"
)

// The sort.Interface methods of ActivePodsWithRanks have value receivers and
// a fixed set of fields, yet Less needs the instant classes of the whole set
// (class.go), which would cost O(n) per comparison to recompute. They are
// computed once instead, on the first Less that finds no valid entry, and kept
// in a small process-wide cache keyed by the identity of the Pods and Rank
// slices. Swap permutes the cached entries along with the pods, and a
// permutation does not change the set, so the classes stay valid for a whole
// sort. Every Less also checks that the entries of the two pods it compares
// belong to those pods (same pointer, same key fingerprint) and rebuilds
// otherwise, so a slice refilled or resized between sorts is regrouped.
//
// Consistency does not depend on the cache being fresh: the time rules read
// only a per-pod class, so any assignment, even a stale one, yields a strict
// weak order; a fresh one is what makes the order equal upstream's.
//
// The cache holds no pod pointers (addresses are kept as integers), only the
// representative UID strings, and at most lessCacheSlots sets; more sets
// sorted concurrently than that evict one another and regroup.

const lessCacheSlots = 16

type lessCache struct {
	pods, ranks uintptr
	n, nr       int
	pol         policy
	at          []lessEntry
}

type lessEntry struct {
	pod    uintptr
	print  uint64
	r6, r8 classRef
}

var (
	lessCaches [lessCacheSlots]atomic.Pointer[lessCache]
	lessNext   atomic.Uint32
)

func podAddr(p *v1.Pod) uintptr { return uintptr(unsafe.Pointer(p)) }

// fingerprint covers the key fields grouping reads apart from restarts, so a
// pod edited in place between two sorts of the same slice is noticed.
func fingerprint(k *sortKey) uint64 {
	h := fmix64(k.head ^ uint64(k.rank)<<1)
	h = fmix64(h ^ uint64(k.ready.sec) ^ uint64(k.ready.nsec)<<34)
	return fmix64(h ^ uint64(k.created.sec) ^ uint64(k.created.nsec)<<34)
}

func (s ActivePodsWithRanks) sliceIDs() (uintptr, uintptr) {
	return uintptr(unsafe.Pointer(unsafe.SliceData(s.Pods))), uintptr(unsafe.Pointer(unsafe.SliceData(s.Rank)))
}

// findCache returns the cached classes of s's slices, or nil.
func (s ActivePodsWithRanks) findCache() *lessCache {
	pods, ranks := s.sliceIDs()
	for i := range lessCaches {
		if e := lessCaches[i].Load(); e != nil && e.pods == pods && e.n == len(s.Pods) && e.ranks == ranks && e.nr == len(s.Rank) {
			return e
		}
	}
	return nil
}

// classesOf fills the instant classes of keys a and b (pods i and j),
// building the cache entry for s when it is missing or stale.
func (s ActivePodsWithRanks) classesOf(pol *policy, i, j int, a, b *sortKey) {
	if !pol.logScale {
		return
	}
	e := s.findCache()
	if e == nil || !e.pol.now.Equal(pol.now) || e.pol.cost != pol.cost || !e.valid(i, a) || !e.valid(j, b) {
		e = s.buildCache(pol)
	}
	a.r6, a.r8 = e.at[i].r6, e.at[i].r8
	b.r6, b.r8 = e.at[j].r6, e.at[j].r8
}

func (e *lessCache) valid(i int, k *sortKey) bool {
	return e.at[i].pod == podAddr(k.pod) && e.at[i].print == fingerprint(k)
}

func (s ActivePodsWithRanks) buildCache(pol *policy) *lessCache {
	// Grouping borrows the default Selector's pooled scratch, so a build
	// allocates only the entry it keeps.
	sc := defaultSelector.acquire()
	defer defaultSelector.release(sc)
	sc.keys = grow(sc.keys, len(s.Pods))
	keys := sc.keys
	for i, p := range s.Pods {
		pol.makeKey(&keys[i], p, s.rank(i), i)
	}
	sc.class.assignClasses(keys, pol)
	pods, ranks := s.sliceIDs()
	e := &lessCache{pods: pods, ranks: ranks, n: len(s.Pods), nr: len(s.Rank), pol: *pol, at: make([]lessEntry, len(keys))}
	for i := range keys {
		k := &keys[i]
		e.at[i] = lessEntry{pod: podAddr(k.pod), print: fingerprint(k), r6: k.r6, r8: k.r8}
	}
	// One entry per slice: replace the old one in place, else take the next
	// slot round-robin.
	for i := range lessCaches {
		if old := lessCaches[i].Load(); old != nil && old.pods == pods && old.n == e.n {
			lessCaches[i].Store(e)
			return e
		}
	}
	lessCaches[lessNext.Add(1)%lessCacheSlots].Store(e)
	return e
}

// swapCached mirrors Swap in the cache entry of s, if there is a valid one.
func (s ActivePodsWithRanks) swapCached(i, j int) {
	e := s.findCache()
	if e == nil || e.at[i].pod != podAddr(s.Pods[i]) || e.at[j].pod != podAddr(s.Pods[j]) {
		return
	}
	e.at[i], e.at[j] = e.at[j], e.at[i]
}
