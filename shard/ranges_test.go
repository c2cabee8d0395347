package shard

import (
	"math"
	"math/rand/v2"
	"testing"
)

// interesting values: both ends of the space, where off-by-one and wrap
// bugs live.
func pointPool() []uint64 {
	var pool []uint64
	for i := uint64(0); i < 12; i++ {
		pool = append(pool, i, math.MaxUint64-i, 1<<63+i-6)
	}
	return pool
}

func randomSet(r *rand.Rand, pool []uint64) Ranges {
	var rs []Range
	for range r.IntN(4) {
		a, b := pool[r.IntN(len(pool))], pool[r.IntN(len(pool))]
		rs = append(rs, Range{First: min(a, b), Last: max(a, b)})
	}
	return NewRanges(rs...)
}

// probes are every endpoint and its neighbours: set operations change their
// answer only there.
func probes(sets ...Ranges) []uint64 {
	out := []uint64{0, math.MaxUint64}
	for _, s := range sets {
		for _, r := range s {
			out = append(out, r.First, r.Last, r.First-1, r.First+1, r.Last-1, r.Last+1)
		}
	}
	return out
}

func naiveContains(rs Ranges, h uint64) bool {
	for _, r := range rs {
		if r.First <= h && h <= r.Last {
			return true
		}
	}
	return false
}

func checkNormal(t *testing.T, rs Ranges) {
	t.Helper()
	for i, r := range rs {
		if r.First > r.Last {
			t.Fatalf("%v: range %d reversed", rs, i)
		}
		if i > 0 && rs[i-1].Last != math.MaxUint64 && r.First <= rs[i-1].Last+1 {
			t.Fatalf("%v: ranges %d and %d overlap or touch", rs, i-1, i)
		}
	}
}

func TestRangesSetOperationsAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pool := pointPool()
	for range 3000 {
		a, b := randomSet(r, pool), randomSet(r, pool)
		union, inter, diff := a.Union(b), a.Intersect(b), a.Subtract(b)
		for _, s := range []Ranges{a, b, union, inter, diff} {
			checkNormal(t, s)
		}
		for _, h := range probes(a, b) {
			inA, inB := naiveContains(a, h), naiveContains(b, h)
			if a.Contains(h) != inA {
				t.Fatalf("%v.Contains(%#x) = %v", a, h, !inA)
			}
			if union.Contains(h) != (inA || inB) {
				t.Fatalf("%v ∪ %v at %#x: %v", a, b, h, union.Contains(h))
			}
			if inter.Contains(h) != (inA && inB) {
				t.Fatalf("%v ∩ %v at %#x: %v", a, b, h, inter.Contains(h))
			}
			if diff.Contains(h) != (inA && !inB) {
				t.Fatalf("%v − %v at %#x: %v", a, b, h, diff.Contains(h))
			}
		}
		if a.Overlaps(b) != !inter.Empty() {
			t.Fatalf("%v overlaps %v: %v", a, b, a.Overlaps(b))
		}
	}
}

func TestNewRangesMergesTouching(t *testing.T) {
	got := NewRanges(Range{10, 19}, Range{0, 9}, Range{30, 40}, Range{35, 36}, Range{math.MaxUint64, math.MaxUint64}, Range{41, math.MaxUint64 - 1})
	want := Ranges{{0, 19}, {30, math.MaxUint64}}
	if !got.Equal(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if !NewRanges().Empty() || NewRanges() != nil {
		t.Fatal("NewRanges() is not the empty set")
	}
}

func TestNewRangesPanicsOnReversedRange(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	NewRanges(Range{First: 2, Last: 1})
}

func TestRangesStringRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pool := pointPool()
	for range 500 {
		a := randomSet(r, pool)
		back, err := ParseRanges(a.String())
		if err != nil || !back.Equal(a) {
			t.Fatalf("%q: got %v, %v", a.String(), back, err)
		}
	}
	if got := FullRanges().String(); got != "0000000000000000-ffffffffffffffff" {
		t.Fatalf("full: %q", got)
	}
	for _, bad := range []string{"x", "1-", "-1", "2-1", "1-2,zz-3", "10000000000000000-1"} {
		if _, err := ParseRanges(bad); err == nil {
			t.Errorf("ParseRanges(%q): no error", bad)
		}
	}
}

func TestFraction(t *testing.T) {
	cases := []struct {
		rs   Ranges
		want float64
	}{
		{nil, 0},
		{FullRanges(), 1},
		{Ranges{{0, 1<<63 - 1}}, 0.5},
		{Ranges{{0, 1<<62 - 1}, {3 << 62, math.MaxUint64}}, 0.5},
	}
	for _, c := range cases {
		if got := c.rs.Fraction(); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%v: %v, want %v", c.rs, got, c.want)
		}
	}
}
