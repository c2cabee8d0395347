package shard

import (
	"math"
	"math/bits"
	"slices"
)

// Assignment is every member's share of the hash space, keyed by identity.
// The shares are disjoint and together cover the whole space.
type Assignment map[string]Ranges

// Assign computes the assignment for a set of members. It is a pure
// function of the set (order and duplicates don't matter) and of the slot
// count and load factor, so every member that sees the same live Leases
// computes the same assignment without talking to the others.
//
// How: the space is cut into WithSlots equal slots. Every (member, slot)
// pair gets a pseudo-random score, as in rendezvous hashing; the pairs are
// taken from the highest score down, and a pair wins its slot unless the slot
// is taken or the member already has its capacity, slots/members × load
// factor (rounded down, but at least the fair share rounded up). Plain rendezvous hashing moves the fewest slots when a member
// comes or goes but leaves members up to half again as loaded as the mean
// with a few hundred slots; the capacity caps the load at the load factor,
// and the slack above 1 keeps the extra moves a capacity causes (a displaced
// slot pushing another) small. With 1024 slots and 1.05 a member holds at
// most 5% more than the mean and a join or leave moves about 1.1/N of the
// space instead of the minimal 1/N.
//
// Adjacent slots of one member merge into one range, so a share has at most
// slots/members ranges; fewer slots make shorter selectors and coarser
// balance.
func Assign(members []string, opts ...Option) Assignment {
	c := newConfig(opts)
	return assign(members, c.slots, c.loadPermille)
}

type scoredPair struct {
	score  uint64
	member int32
	slot   int32
}

func assign(members []string, slots, loadPermille int) Assignment {
	names := make([]string, 0, len(members))
	for _, m := range members {
		if m != "" {
			names = append(names, m)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	out := make(Assignment, len(names))
	if len(names) == 0 {
		return out
	}
	n := len(names)
	// Integer arithmetic only: every member must get the same capacity on
	// every platform. The capacity is the load factor's share rounded down,
	// but never below the fair share rounded up, or some slot would find
	// every member full.
	capacity := max((slots+n-1)/n, slots*loadPermille/(1000*n))

	pairs := make([]scoredPair, 0, n*slots)
	for i, name := range names {
		seed := Hash(name)
		for s := 0; s < slots; s++ {
			pairs = append(pairs, scoredPair{score: pairScore(seed, s), member: int32(i), slot: int32(s)})
		}
	}
	slices.SortFunc(pairs, func(a, b scoredPair) int {
		switch {
		case a.score != b.score:
			if a.score > b.score {
				return -1
			}
			return 1
		case a.member != b.member:
			return int(a.member - b.member)
		}
		return int(a.slot - b.slot)
	})

	owner := make([]int32, slots)
	for s := range owner {
		owner[s] = -1
	}
	load := make([]int, n)
	left := slots
	for _, p := range pairs {
		if left == 0 {
			break
		}
		if owner[p.slot] >= 0 || load[p.member] >= capacity {
			continue
		}
		owner[p.slot] = p.member
		load[p.member]++
		left--
	}

	parts := make([][]Range, n)
	for s, m := range owner {
		parts[m] = append(parts[m], slotRange(s, slots))
	}
	for i, name := range names {
		out[name] = normalize(parts[i])
	}
	return out
}

// pairScore is the rendezvous weight of a member (by the hash of its
// identity) for a slot. It is part of the protocol: members that computed
// it differently would disagree on the assignment.
func pairScore(memberSeed uint64, slot int) uint64 {
	return mix64(memberSeed ^ mix64(uint64(slot)+1))
}

// mix64 is the splitmix64 finalizer: FNV-1a of similar identities
// ("replica-1", "replica-2") differs in few bits, and the scores must not.
func mix64(x uint64) uint64 {
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// slotRange is slot s of n equal slots: [floor(s·2^64/n), floor((s+1)·2^64/n)).
func slotRange(s, n int) Range {
	first := slotStart(s, n)
	if s == n-1 {
		return Range{First: first, Last: math.MaxUint64}
	}
	return Range{First: first, Last: slotStart(s+1, n) - 1}
}

func slotStart(s, n int) uint64 {
	q, _ := bits.Div64(uint64(s), 0, uint64(n)) // s < n, so the quotient fits
	return q
}
