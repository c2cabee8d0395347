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
	slot    []int32  // per pod: its class's table slot, -1 when not grouped
	table   []uint64 // per slot: hash tag << 32 | representative's position + 1; 0 when empty
	multi   []bool   // per slot: the class holds two or more pods
	members []int32  // rule-8 members found while grouping rule 6
}

// assignClasses fills r6 and r8 of every key. Without log scaling the classes
// are never read (plain comparison needs no tie-break), so it does nothing.
//
// In the common case no two pods share an instant and every class keeps the
// one pod makeKey gave it; grouping then only detects that. Rule 8 groups
// the pods classMember admits for it, which without a rule-6 class of
// several pods are the few not-ready (or zero ready time) ones, collected in
// the rule-6 pass instead of rescanning every key.
func (cs *classScratch) assignClasses(keys []sortKey, pol *policy) {
	if !pol.logScale || len(keys) < 2 {
		return
	}
	cs.members = cs.members[:0]
	anyMulti := cs.group(keys, nil, classReady)
	if anyMulti {
		// Ready pods in a class of several join rule 8 too: regroup from
		// every key.
		cs.group(keys, nil, classCreated)
		return
	}
	cs.group(keys, cs.members, classCreated)
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

// classHash mixes the fields sameClass compares: one multiply per field and
// one finalizer, which spreads them enough for linear probing; sameClass
// settles every collision.
func classHash(k *sortKey, which int) uint64 {
	const m1, m2 = 0x9e3779b97f4a7c15, 0xc2b2ae3d27d4eb4f
	h := k.head*m1 ^ uint64(k.rank)*m2 ^ uint64(k.ready.sec)*m1 ^ uint64(k.ready.nsec)
	if which == classCreated {
		h ^= (uint64(uint32(k.regular))<<32|uint64(uint32(k.sidecar)))*m2 ^ uint64(k.created.sec)*0xff51afd7ed558ccd ^ uint64(k.created.nsec)<<32
	}
	return fmix64(h)
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

// group assigns the classes of rule which over the given positions (all keys
// when only is nil) and reports whether any class holds several pods. The
// rule-6 pass also collects the rule-8 candidates into cs.members.
func (cs *classScratch) group(keys []sortKey, only []int32, which int) bool {
	n := len(keys)
	if only != nil {
		n = len(only)
	}
	if n < 2 {
		return false
	}
	m := 16
	for m < 2*n {
		m <<= 1
	}
	cs.slot = grow(cs.slot, len(keys))
	cs.table = grow(cs.table, m)
	cs.multi = grow(cs.multi, m)
	clear(cs.table)
	clear(cs.multi)
	mask := uint64(m - 1)
	anyMulti := false
	add := func(i int) {
		k := &keys[i]
		if which == classCreated {
			k.restarts()
		}
		h := classHash(k, which)
		tag := h >> 32 << 32
		s := h & mask
		for {
			e := cs.table[s]
			if e == 0 {
				cs.table[s] = tag | uint64(i+1)
				break
			}
			if e&^(1<<32-1) == tag {
				if j := int(uint32(e)) - 1; sameClass(k, &keys[j], which) {
					cs.multi[s] = true
					anyMulti = true
					if cmpUID(k, &keys[j]) < 0 {
						cs.table[s] = tag | uint64(i+1)
					}
					break
				}
			}
			s = (s + 1) & mask
		}
		cs.slot[i] = int32(s)
	}
	if only != nil {
		for _, i := range only {
			add(int(i))
		}
	} else {
		for i := range keys {
			k := &keys[i]
			if !classMember(k, which) {
				if which == classReady && classMember(k, classCreated) {
					cs.members = append(cs.members, int32(i))
				}
				cs.slot[i] = -1
				continue
			}
			add(i)
		}
	}
	if !anyMulti {
		// Every class holds one pod: the keys already name themselves.
		return false
	}
	assign := func(i int) {
		s := cs.slot[i]
		if s < 0 {
			return
		}
		rep := &keys[int(uint32(cs.table[s]))-1]
		ref := classRef{uid: rep.uid, head: rep.uidHead, multi: cs.multi[s]}
		if which == classReady {
			keys[i].r6 = ref
		} else {
			keys[i].r8 = ref
		}
	}
	if only != nil {
		for _, i := range only {
			assign(int(i))
		}
	} else {
		for i := range keys {
			assign(i)
		}
	}
	return true
}
