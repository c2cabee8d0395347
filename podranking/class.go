package podranking

import "k8s.io/apimachinery/pkg/types"

// Instant classes make the log-scaled time rules (6 and 8) a strict weak
// order without giving up upstream's fall-through on equal instants.
//
// Within one ranking, the pods that can meet at a time rule (same built-in
// prefix) are grouped by their exact instant. A class is represented by the
// smallest UID among its pods. Under log scaling a pod's key for the rule is
// (bucket, representative, multi, instant if multi), compared in that order:
//
//   - equal instants share a class, hence the whole key, and fall through to
//     the next rule exactly as upstream does;
//   - different instants in one bucket compare by representative, which is
//     the pod's own UID whenever its class has one pod, so inputs with
//     distinct instants are ordered exactly as upstream orders them;
//   - two one-pod classes with equal representatives (duplicate UIDs) are
//     equivalent, as upstream's UID comparison finds them; a class of several
//     pods whose representative equals another class's is told apart by
//     multi and then by instant, which keeps the relation transitive.
//
// Because the key is a function of the pod and the set being ranked, every
// comparison is consistent with every other one, whatever the input.

// classRef is a pod's instant class for one time rule.
type classRef struct {
	uid   types.UID // smallest UID in the class
	head  uint64    // uidPrefix(uid)
	multi bool      // the class holds two or more pods
}

func cmpClass(a, b *classRef) int { return cmpUIDWithHead(a.head, b.head, a.uid, b.uid) }

const (
	classReady   = 6 // rule 6: ready instants of ready pods
	classCreated = 8 // rule 8: creation instants
)

// classScratch is reusable memory for grouping: an open-addressing hash table
// of pod positions, so grouping costs O(n) expected time and no allocation
// once the buffers have grown to the input size.
type classScratch struct {
	hashes []uint64
	slot   []int32 // per pod: its class's table slot, -1 when not grouped
	table  []int32 // per slot: representative's position + 1, 0 when empty
	multi  []bool  // per slot: the class holds two or more pods
}

// assignClasses fills r6 and r8 of every key. Without log scaling the classes
// are never read (plain comparison needs no tie-break), so it does nothing.
func (cs *classScratch) assignClasses(keys []sortKey, pol *policy) {
	if !pol.logScale || len(keys) < 2 {
		return
	}
	cs.group(keys, classReady)
	cs.group(keys, classCreated)
}

// classMember reports whether k takes part in the grouping for rule which.
// Pods outside it keep their one-pod class, which is exact for them: a ready
// pod whose ready instant no other pod with its prefix shares is decided at
// rule 6 against every pod it meets there, so it never reaches rule 8.
func classMember(k *sortKey, which int) bool {
	if k.pod == nil {
		return false
	}
	if which == classReady {
		return k.hasReady && !k.ready.zero
	}
	if k.created.zero {
		return false
	}
	return !k.hasReady || k.ready.zero || k.r6.multi
}

// fmix64 is a 64-bit finalizer that spreads every input bit over the result.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

func classHash(k *sortKey, which int) uint64 {
	h := fmix64(k.head ^ 0x9e3779b97f4a7c15)
	h = fmix64(h ^ uint64(k.rank))
	h = fmix64(h ^ uint64(k.ready.sec) ^ uint64(k.ready.nsec)<<34)
	if which == classCreated {
		h = fmix64(h ^ uint64(uint32(k.regular))<<32 ^ uint64(uint32(k.sidecar)))
		h = fmix64(h ^ uint64(k.created.sec) ^ uint64(k.created.nsec)<<34)
	}
	return h
}

// sameClass: pods meet at rule 6 when rules 1-5 tie, and at rule 8 when rules
// 1-7 tie too (for ready pods that means the same ready instant, see
// classMember), so the prefix takes part in the class.
func sameClass(a, b *sortKey, which int) bool {
	if a.head != b.head || a.rank != b.rank || !a.ready.equal(b.ready) {
		return false
	}
	if which == classReady {
		return true
	}
	return a.regular == b.regular && a.sidecar == b.sidecar && a.created.equal(b.created)
}

func (cs *classScratch) group(keys []sortKey, which int) {
	n := len(keys)
	m := 16
	for m < 2*n {
		m <<= 1
	}
	cs.hashes = grow(cs.hashes, n)
	cs.slot = grow(cs.slot, n)
	cs.table = grow(cs.table, m)
	cs.multi = grow(cs.multi, m)
	clear(cs.table)
	clear(cs.multi)
	mask := uint64(m - 1)
	for i := range keys {
		k := &keys[i]
		if !classMember(k, which) {
			cs.slot[i] = -1
			continue
		}
		if which == classCreated {
			k.restarts()
		}
		h := classHash(k, which)
		s := h & mask
		for {
			r := cs.table[s]
			if r == 0 {
				cs.table[s] = int32(i + 1)
				break
			}
			if j := r - 1; cs.hashes[j] == h && sameClass(k, &keys[j], which) {
				cs.multi[s] = true
				if cmpUID(k, &keys[j]) < 0 {
					cs.table[s] = int32(i + 1)
				}
				break
			}
			s = (s + 1) & mask
		}
		cs.hashes[i] = h
		cs.slot[i] = int32(s)
	}
	for i := range keys {
		s := cs.slot[i]
		if s < 0 {
			continue
		}
		rep := &keys[cs.table[s]-1]
		ref := classRef{uid: rep.uid, head: rep.uidHead, multi: cs.multi[s]}
		if which == classReady {
			keys[i].r6 = ref
		} else {
			keys[i].r8 = ref
		}
	}
}
