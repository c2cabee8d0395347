package partialsort

import (
	"math/rand/v2"
	"slices"
	"sort" //nolint:depguard // the partial sort must make exactly sort.Sort's decisions, so sort.Sort is the reference
	"testing"
)

// relationCase is one relation over items 0..n-1 and the input order of the
// items.
type relationCase struct {
	name  string
	less  func(a, b int32) bool
	input []int32
}

// tableSorter is sort.Sort's view of the items under a relation.
type tableSorter struct {
	items []int32
	less  func(a, b int32) bool
}

func (s tableSorter) Len() int           { return len(s.items) }
func (s tableSorter) Swap(i, j int)      { s.items[i], s.items[j] = s.items[j], s.items[i] }
func (s tableSorter) Less(i, j int) bool { return s.less(s.items[i], s.items[j]) }

// newRelationSort is a Sorter over the items of c with equal Primary, so
// that every comparison is decided by the relation.
func newRelationSort(c relationCase) *Sorter {
	order := make([]Entry, len(c.input))
	for i, item := range c.input {
		order[i] = Entry{Pos: item}
	}
	return &Sorter{Order: order, Tie: c.less}
}

// positions lists the items of entries.
func positions(entries []Entry) []int32 {
	out := make([]int32, len(entries))
	for i, e := range entries {
		out[i] = e.Pos
	}
	return out
}

// table is a relation given by a matrix.
func table(n int, lessAB func(a, b int) bool) func(a, b int32) bool {
	t := make([]bool, n*n)
	for a := range n {
		for b := range n {
			t[a*n+b] = lessAB(a, b)
		}
	}
	return func(a, b int32) bool { return t[int(a)*n+int(b)] }
}

// relationCases returns relations of every kind over n items: arbitrary
// tables (neither asymmetric nor transitive), tournaments (exactly one of
// each pair is less, so cycles abound), and strict weak orders with many
// ties over sorted, reversed, sawtooth and shuffled inputs, which reach
// partialInsertionSort's shifts, the decreasing hint, the equal partition,
// pattern breaking and the heapsort fallback.
func relationCases(r *rand.Rand, n int) []relationCase {
	shuffled := func() []int32 {
		in := make([]int32, n)
		for i := range in {
			in[i] = int32(i)
		}
		r.Shuffle(n, func(i, j int) { in[i], in[j] = in[j], in[i] })
		return in
	}
	density := r.Float64()
	arbitrary := table(n, func(int, int) bool { return r.Float64() < density })
	// A tournament: one coin per unordered pair, read the same way from
	// both sides.
	coins := make([]bool, n*n)
	for a := range n {
		for b := a + 1; b < n; b++ {
			coins[a*n+b] = r.IntN(2) == 0
		}
	}
	tournament := table(n, func(a, b int) bool {
		switch {
		case a < b:
			return coins[a*n+b]
		case a > b:
			return !coins[b*n+a]
		}
		return false
	})
	values := make([]int, n)
	classes := 1 + r.IntN(max(1, n/4))
	for i := range values {
		values[i] = r.IntN(classes)
	}
	weak := func(a, b int32) bool { return values[a] < values[b] }
	byValue := func(desc bool) []int32 {
		in := shuffled()
		slices.SortStableFunc(in, func(a, b int32) int {
			if desc {
				return values[b] - values[a]
			}
			return values[a] - values[b]
		})
		return in
	}
	sawtooth := shuffled()
	slices.Sort(sawtooth)
	for i := range sawtooth {
		sawtooth[i] = int32((i * 7) % max(1, n))
	}
	// A sorted input with a few elements out of place reaches the shifts
	// of partialInsertionSort, including shifts below a segment's start.
	nearly := byValue(false)
	for range 1 + r.IntN(4) {
		if n > 1 {
			i, j := r.IntN(n), r.IntN(n)
			nearly[i], nearly[j] = nearly[j], nearly[i]
		}
	}
	// A weak order with a few pairs decided at random is sorted enough for
	// the already-partitioned and increasing paths, yet not transitive, so
	// the shifts of partialInsertionSort after an equal partition cross
	// the segment's start.
	noise := r.Float64() * 0.05
	perturbed := table(n, func(a, b int) bool {
		if r.Float64() < noise {
			return r.IntN(2) == 0
		}
		return values[a] < values[b]
	})
	return []relationCase{
		{"perturbed-sorted", perturbed, byValue(false)},
		{"perturbed-nearly-sorted", perturbed, nearly},
		{"arbitrary", arbitrary, shuffled()},
		{"tournament", tournament, shuffled()},
		{"tournament-sawtooth", tournament, sawtooth},
		{"weak", weak, shuffled()},
		{"weak-sorted", weak, byValue(false)},
		{"weak-reversed", weak, byValue(true)},
		{"weak-nearly-sorted", weak, nearly},
		{"arbitrary-nearly-sorted", arbitrary, nearly},
	}
}

// shiftBelowStartCase is a relation on which sort.Sort's partial insertion
// sort moves an element below the start of its segment: 300 items sorted
// by value, except a few adjacent inversions, with 77 items sharing item
// 150's value. The first partition puts item 150 in place; the right
// segment partitions the equal items away (partitionEqual), and the partial
// insertion sort of the remainder [228, 300) shifts item 250 left through
// the equal items down to position 152: item 250 is greater than item 225,
// the equal-partition pivot, yet less than every other of the equal items.
// Skipping segments that start at or beyond k loses this move for every k
// in (152, 228].
func shiftBelowStartCase() relationCase {
	const n, x, equalPivot = 300, 250, 225
	value := func(id int32) int32 {
		switch {
		case id <= 150:
			return id
		case id <= 227:
			return 150
		}
		return id - 77
	}
	less := func(a, b int32) bool {
		switch {
		case a == x && b == x:
			return false
		case a == x:
			return value(b) > 150 || (value(b) == 150 && b != 150 && b != equalPivot)
		case b == x:
			return value(a) <= 150 && (a == 150 || a == equalPivot || value(a) < 150)
		}
		return value(a) < value(b)
	}
	in := make([]int32, n)
	for i := range in {
		in[i] = int32(i)
	}
	for _, i := range []int{10, 20, 30, 40, 50, 60, 230, 233, 236, 239, 242} {
		in[i], in[i+1] = in[i+1], in[i]
	}
	return relationCase{"shift-below-start", less, in}
}

// TestSortPrefixMatchesSortSort pins Sorter to sort.Sort: for every k
// the first k positions hold the same items in the same order as after
// sort.Sort, on relations that are not orders at all. A Go release whose
// sort.Sort decides differently fails here.
func TestSortPrefixMatchesSortSort(t *testing.T) {
	r := newRand(20261125)
	sizes := []int{0, 1, 2, 3, 12, 13, 49, 50, 51, 89, 233, 300}
	random := 40
	if raceEnabled {
		sizes = []int{0, 1, 2, 12, 13, 50, 51, 233}
		random = 4
	}
	for range random {
		sizes = append(sizes, r.IntN(301))
	}
	for _, n := range sizes {
		cases := relationCases(r, n)
		if n == 300 {
			cases = append(cases, shiftBelowStartCase())
		}
		for _, c := range cases {
			want := slices.Clone(c.input)
			sort.Sort(tableSorter{items: want, less: c.less})
			for k := 0; k <= n; k++ {
				s := newRelationSort(c)
				s.SortPrefix(k)
				if got := positions(s.Order[:k]); !slices.Equal(got, want[:k]) {
					t.Fatalf("%s n=%d k=%d: partial sort %v, sort.Sort %v", c.name, n, k, got, want[:k])
				}
			}
		}
	}
}

// TestSortPrefixResumes checks that a larger k after a smaller one resumes
// the skipped segments and still ends as sort.Sort does.
func TestSortPrefixResumes(t *testing.T) {
	r := newRand(7)
	for range rounds(30, 6) {
		n := r.IntN(400)
		for _, c := range relationCases(r, n) {
			want := slices.Clone(c.input)
			sort.Sort(tableSorter{items: want, less: c.less})
			s := newRelationSort(c)
			for k := 0; k <= n; k += 1 + r.IntN(max(1, n/5)) {
				s.SortPrefix(k)
				if got := positions(s.Order[:k]); !slices.Equal(got, want[:k]) {
					t.Fatalf("%s n=%d: after resuming to k=%d: %v, sort.Sort %v", c.name, n, k, got, want[:k])
				}
			}
			s.SortPrefix(n)
			if got := positions(s.Order); !slices.Equal(got, want) {
				t.Fatalf("%s n=%d: resumed to the end: %v, sort.Sort %v", c.name, n, got, want)
			}
		}
	}
}

// TestSortPrefixWithPrimaryMatchesSortSort is TestSortPrefixMatchesSortSort
// with the entries' Primary in play: a few classes of Primary, the relation
// deciding within a class, so that comparisons are decided both by the
// inlined Primary test and by Tie.
func TestSortPrefixWithPrimaryMatchesSortSort(t *testing.T) {
	r := newRand(20261129)
	for range rounds(20, 3) {
		n := r.IntN(301)
		primary := make([]uint64, n)
		classes := 1 + r.IntN(6)
		for i := range primary {
			primary[i] = uint64(r.IntN(classes))
		}
		for _, c := range relationCases(r, n) {
			want := slices.Clone(c.input)
			sort.Sort(tableSorter{items: want, less: func(a, b int32) bool {
				if primary[a] != primary[b] {
					return primary[a] < primary[b]
				}
				return c.less(a, b)
			}})
			for k := 0; k <= n; k += 1 + r.IntN(max(1, n/10)) {
				s := newRelationSort(c)
				for i := range s.Order {
					s.Order[i].Primary = primary[s.Order[i].Pos]
				}
				s.SortPrefix(k)
				if got := positions(s.Order[:k]); !slices.Equal(got, want[:k]) {
					t.Fatalf("%s n=%d k=%d: partial sort %v, sort.Sort %v", c.name, n, k, got, want[:k])
				}
			}
		}
	}
}

// rounds is n, or underRace under the race detector.
func rounds(n, underRace int) int {
	if raceEnabled {
		return underRace
	}
	return n
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }
