package podranking

import (
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// Instant classes are the tie order of WithConsistentTies. Upstream's time
// rules (6 and 8) let two pods with exactly equal instants fall through to
// the later rules while pods of the same log2 bucket with other instants
// compare by UID, which can form a cycle: A and B ready in the same second,
// C in another second of their bucket, UIDs a < c < b and B restarting more
// than A give A < C < B < A. The class order groups the pods that meet at a
// time rule by exact instant and lets each class stand for its pods with its
// smallest UID, which makes the relation a strict weak order on every input.

const (
	classReady   = 6 // rule 6: ready instants of ready pods
	classCreated = 8 // rule 8: creation instants
)

// classRef is a pod's instant class for one time rule.
type classRef struct {
	uid   types.UID // smallest UID in the class
	multi bool      // the class holds two or more pods
}

// instantClasses are one pod's classes for rules 6 and 8.
type instantClasses struct{ ready, created classRef }

// assignClasses groups the keys that can meet at a time rule: rule 6 groups
// ready pods by (rules 1-5, ready instant); rule 8 groups by (rules 1-7,
// creation instant). Zero times are left alone, as they never reach the UID
// comparison.
func assignClasses(keys []key) []instantClasses {
	type readyGroup struct {
		head  uint64
		rank  int
		ready instant
	}
	type createdGroup struct {
		readyGroup
		regular, sidecar int32
		created          instant
	}
	classes := make([]instantClasses, len(keys))
	ready := make(map[readyGroup]*classRef)
	created := make(map[createdGroup]*classRef)
	join := func(c *classRef, uid types.UID) *classRef {
		if c == nil {
			return &classRef{uid: uid}
		}
		c.multi = true
		if uid < c.uid {
			c.uid = uid
		}
		return c
	}
	for i := range keys {
		k := &keys[i]
		if k.pod == nil {
			continue
		}
		rg := readyGroup{k.head, k.rank, k.ready}
		if k.head&headReadyBit != 0 && !k.ready.isZero() {
			ready[rg] = join(ready[rg], k.pod.UID)
		}
		if !k.created.isZero() {
			regular, sidecar := k.restarts()
			cg := createdGroup{rg, regular, sidecar, k.created}
			created[cg] = join(created[cg], k.pod.UID)
		}
	}
	for i := range keys {
		k := &keys[i]
		if k.pod == nil {
			continue
		}
		rg := readyGroup{k.head, k.rank, k.ready}
		if c := ready[rg]; c != nil && k.head&headReadyBit != 0 && !k.ready.isZero() {
			classes[i].ready = *c
		}
		if k.created.isZero() {
			continue
		}
		// The first loop read the restarts of every key with a creation time.
		if c := created[createdGroup{rg, k.regular, k.sidecar, k.created}]; c != nil {
			classes[i].created = *c
		}
	}
	return classes
}

// compareClasses orders two unequal, non-zero instants of one log2 bucket by
// their classes: the smaller representative UID first, then a one-pod class
// before a larger one (reachable only with duplicate UIDs), then, inside one
// class, the more recent instant. Two one-pod classes with equal UIDs are
// equivalent, as upstream finds them.
func (p *policy) compareClasses(rule int, a, b *key) int {
	ca, cb := p.classes[a.idx].ready, p.classes[b.idx].ready
	if rule == classCreated {
		ca, cb = p.classes[a.idx].created, p.classes[b.idx].created
	}
	if c := strings.Compare(string(ca.uid), string(cb.uid)); c != 0 {
		return c
	}
	switch {
	case ca.multi != cb.multi:
		if cb.multi {
			return -1
		}
		return 1
	case !ca.multi:
		return 0
	}
	if rule == classCreated {
		return afterOrZero(false, false, a.created.after(b.created))
	}
	return afterOrZero(false, false, a.ready.after(b.ready))
}
