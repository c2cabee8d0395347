package shard

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func replicaNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("replica-%d", i)
	}
	return names
}

func randomHashes(seed uint64, n int) []uint64 {
	r := rand.New(rand.NewPCG(seed, seed+1))
	hs := make([]uint64, n)
	for i := range hs {
		hs[i] = Hash(randomUID(r))
	}
	return hs
}

// owner returns which member's share contains h, checking that exactly one does.
func owner(t *testing.T, a Assignment, h uint64) string {
	t.Helper()
	found := ""
	for name, rs := range a {
		if rs.Contains(h) {
			if found != "" {
				t.Fatalf("hash %#x is in the shares of %s and %s", h, found, name)
			}
			found = name
		}
	}
	if found == "" {
		t.Fatalf("hash %#x is in no share", h)
	}
	return found
}

func TestAssignCoversSpaceOnceAndIgnoresOrder(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 10, 25} {
		names := replicaNames(n)
		a := Assign(names)
		if len(a) != n {
			t.Fatalf("%d members, %d shares", n, len(a))
		}
		var union Ranges
		total := 0.0
		for name, rs := range a {
			checkNormal(t, rs)
			if union.Overlaps(rs) {
				t.Fatalf("n=%d: share of %s overlaps another", n, name)
			}
			union = union.Union(rs)
			total += rs.Fraction()
		}
		if !union.Equal(FullRanges()) || total < 0.999999 || total > 1.000001 {
			t.Fatalf("n=%d: shares cover %v (%v)", n, union, total)
		}
		shuffled := slices.Clone(names)
		rand.New(rand.NewPCG(uint64(n), 0)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		shuffled = append(shuffled, names[0], "")
		b := Assign(shuffled)
		for name, rs := range a {
			if !b[name].Equal(rs) {
				t.Fatalf("n=%d: order or duplicates changed the share of %s", n, name)
			}
		}
	}
	// More members than slots: some get nothing, the space is still covered once.
	few := Assign(replicaNames(5), WithSlots(2))
	var union Ranges
	empty := 0
	for _, rs := range few {
		if rs.Empty() {
			empty++
		}
		if union.Overlaps(rs) {
			t.Fatal("5 members over 2 slots: shares overlap")
		}
		union = union.Union(rs)
	}
	if empty != 3 || !union.Equal(FullRanges()) {
		t.Fatalf("5 members over 2 slots: %d empty shares, union %v", empty, union)
	}
	if got := Assign(nil); len(got) != 0 {
		t.Fatalf("no members: %v", got)
	}
}

// The assignment is part of the protocol between members, possibly of
// different builds: this pins it for a small ring.
func TestAssignIsStable(t *testing.T) {
	a := Assign([]string{"a", "b"}, WithSlots(8), WithLoadFactor(1))
	got := map[string]string{"a": a["a"].String(), "b": a["b"].String()}
	want := map[string]string{
		"a": "2000000000000000-7fffffffffffffff,e000000000000000-ffffffffffffffff",
		"b": "0000000000000000-1fffffffffffffff,8000000000000000-dfffffffffffffff",
	}
	if got["a"] != want["a"] || got["b"] != want["b"] {
		t.Fatalf("assignment changed:\n got %v\nwant %v", got, want)
	}
}

func TestAssignBalance(t *testing.T) {
	hashes := randomHashes(11, 10000)
	for _, n := range []int{3, 10} {
		a := Assign(replicaNames(n))
		counts := map[string]int{}
		for _, h := range hashes {
			counts[owner(t, a, h)]++
		}
		maxCount, maxShare := 0, 0.0
		for name, c := range counts {
			maxCount = max(maxCount, c)
			maxShare = max(maxShare, a[name].Fraction())
		}
		mean := float64(len(hashes)) / float64(n)
		ratio := float64(maxCount) / mean
		t.Logf("%d members: max/mean over 10k uids %.3f; largest share of the space %.4f (mean %.4f, %.3f); ranges in a share up to %d",
			n, ratio, maxShare, 1/float64(n), maxShare*float64(n), maxRanges(a))
		if ratio > 1.15 {
			t.Errorf("%d members: max/mean %.3f > 1.15", n, ratio)
		}
		if maxShare*float64(n) > 1.05+1e-9 {
			t.Errorf("%d members: largest share %.4f exceeds the load factor", n, maxShare*float64(n))
		}
	}
}

func maxRanges(a Assignment) int {
	m := 0
	for _, rs := range a {
		m = max(m, len(rs))
	}
	return m
}

func movedFraction(t *testing.T, before, after Assignment, hashes []uint64) float64 {
	moved := 0
	for _, h := range hashes {
		if owner(t, before, h) != owner(t, after, h) {
			moved++
		}
	}
	return float64(moved) / float64(len(hashes))
}

func TestAssignMovesLittleOnJoinAndLeave(t *testing.T) {
	hashes := randomHashes(12, 10000)
	for _, n := range []int{3, 10} {
		names := replicaNames(n + 1)
		small, big := Assign(names[:n]), Assign(names)
		join := movedFraction(t, small, big, hashes)
		// n+1 members: the newcomer's fair share, 1/(n+1), must move.
		t.Logf("join %d→%d: %.4f of keys moved (ideal %.4f, ratio %.3f)", n, n+1, join, 1/float64(n+1), join*float64(n+1))
		if bound := 1.3 / float64(n+1); join > bound {
			t.Errorf("join %d→%d moved %.4f > %.4f", n, n+1, join, bound)
		}
		for _, gone := range []int{0, n / 2, n - 1} {
			rest := slices.Delete(slices.Clone(names[:n]), gone, gone+1)
			leave := movedFraction(t, small, Assign(rest), hashes)
			t.Logf("leave %d→%d (%s): %.4f of keys moved (ideal %.4f, ratio %.3f)", n, n-1, names[gone], leave, 1/float64(n), leave*float64(n))
			if bound := 1.3 / float64(n); leave > bound {
				t.Errorf("leave %d→%d (%s) moved %.4f > %.4f", n, n-1, names[gone], leave, bound)
			}
		}
	}
}
