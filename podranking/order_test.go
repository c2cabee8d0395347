package podranking

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var testNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// refEquivalent reports whether upstream's Less finds pods a and b (with
// ranks) equivalent.
func refEquivalent(a, b *v1.Pod, ra, rb int, now time.Time) bool {
	s := refSorter{pods: []*v1.Pod{a, b}, rank: []int{ra, rb}, now: now}
	return !s.Less(0, 1) && !s.Less(1, 0)
}

// sameUpToEquivalence asserts got and want hold, position by position, the
// same pod or two pods upstream's rules find equivalent: the only freedom an
// unstable sort has.
func sameUpToEquivalence(t *testing.T, want, got []*v1.Pod, rankOf map[*v1.Pod]int, now time.Time) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		if want[i] == got[i] {
			continue
		}
		assert.True(t, refEquivalent(want[i], got[i], rankOf[want[i]], rankOf[got[i]], now),
			"position %d: upstream chose %s, ctrlkit %s, and they are not equivalent", i, want[i].Name, got[i].Name)
	}
}

// TestDifferentialPodsToDelete compares PodsToDelete and Order with the
// literal reference (upstream's sort-then-slice) on random inputs, skipping
// exactly the inputs HasEqualInstantTie flags.
func TestDifferentialPodsToDelete(t *testing.T) {
	configs := []genConfig{
		{nodes: 4, distinct: true},
		{nodes: 20, distinct: true, zeroTimeShare: 5, invalidCosts: true},
		{nodes: 3, distinct: false},                   // whole-hour instants: many ties and corners
		{nodes: 0, distinct: true, sameUIDs: true},    // upstream-test style empty UIDs
		{nodes: 2, distinct: false, zeroTimeShare: 3}, // zero times
		{nodes: 50, distinct: true, invalidCosts: true},
	}
	compared, skipped := 0, 0
	for ci, cfg := range configs {
		for _, n := range []int{1, 2, 7, 40, 300} {
			for seed := uint64(0); seed < 6; seed++ {
				r := newRand(seed*1000 + uint64(ci*100+n))
				pods := genPods(r, n, testNow, cfg)
				related := append(append([]*v1.Pod(nil), pods...), genPods(r, n/3, testNow, cfg)...)
				sel := NewSelector(WithNow(testNow))
				if HasEqualInstantTie(pods, related, testNow) {
					skipped++
					continue
				}
				compared++
				ranks := RankByRelatedPodsOnSameNode(pods, related)
				rankOf := map[*v1.Pod]int{}
				for i, p := range pods {
					rankOf[p] = ranks.Rank[i]
				}
				for _, diff := range []int{0, 1, n / 20, n / 2, n - 1, n, n + 3} {
					input := append([]*v1.Pod(nil), pods...)
					got := sel.PodsToDelete(pods, related, diff)
					assert.Equal(t, input, pods, "input must not be reordered")
					if diff <= 0 {
						assert.Empty(t, got)
						continue
					}
					want := refPodsToDelete(append([]*v1.Pod(nil), pods...), related, min(diff, n), testNow)
					sameUpToEquivalence(t, want, got, rankOf, testNow)
				}
				want := refPodsToDelete(append([]*v1.Pod(nil), pods...), related, max(n-1, 0), testNow)
				full := sel.Order(pods, related)
				if n > 1 {
					sameUpToEquivalence(t, want, full[:n-1], rankOf, testNow)
				}
			}
		}
	}
	t.Logf("compared %d inputs, skipped %d with an equal-instant tie", compared, skipped)
	assert.Greater(t, compared, skipped, "most inputs must be compared")
	assert.Positive(t, skipped, "the corner must occur in the whole-hour configurations")
}

// TestPairwiseAgreement checks, pair by pair on random pods ranked as one
// set, that the class order equals upstream's Less in both directions on
// every pair except those a time rule decides across two instant classes one
// of which holds several pods (there upstream's relation may be cyclic).
// Same-instant pairs, the common case with whole-second timestamps, must
// agree: they fall through exactly as upstream.
func TestPairwiseAgreement(t *testing.T) {
	for ci, cfg := range []genConfig{{nodes: 2}, {nodes: 2, sameUIDs: true}, {nodes: 1, zeroTimeShare: 4}, {nodes: 3, distinct: true}} {
		pods := genPods(newRand(uint64(ci+1)), 80, testNow, cfg)
		ranks := make([]int, len(pods))
		for i := range ranks {
			ranks[i] = i % 2
		}
		s := ActivePodsWithRanks{Pods: pods, Rank: ranks, Now: metav1.NewTime(testNow)}
		ref := refSorter{pods: pods, rank: ranks, now: testNow}
		o := defaultSelector.prepare(&scratch{}, pods, ranks, false, s.policy())
		crossClass, sameInstant := 0, 0
		for i := range pods {
			for j := range pods {
				if i == j {
					continue
				}
				a, b := &o.keys[i], &o.keys[j]
				rule, c := o.pol.compareBuiltin(a, b)
				cross := (rule == RuleReadyTime && !a.ready.equal(b.ready) && (a.r6.multi || b.r6.multi)) ||
					(rule == RuleCreationTime && !a.created.equal(b.created) && (a.r8.multi || b.r8.multi))
				if cross {
					crossClass++
					continue
				}
				pair := ActivePodsWithRanks{Pods: []*v1.Pod{pods[i], pods[j]}, Rank: []int{ranks[i], ranks[j]}, Now: s.Now}
				if pair.HasEqualInstantTie() {
					sameInstant++
				}
				require.Equal(t, ref.Less(i, j), c < 0, "pair %d,%d (config %d): %s", i, j, ci, o.explain(i, j))
			}
		}
		t.Logf("config %d: %d same-instant pairs agreed, %d cross-class pairs skipped", ci, sameInstant, crossClass)
		if !cfg.distinct {
			assert.Positive(t, sameInstant, "config %d must exercise same-instant pairs", ci)
			assert.Positive(t, crossClass, "config %d must exercise cross-class pairs", ci)
		}
	}
}

// TestLessIsUpstream pins the sort.Interface: Less equals the literal
// per-comparison reference of upstream's rules on every ordered pair of
// random pods, equal instants and duplicate UIDs included, with both policy
// flags, and Compare and Explain agree with it. It also checks the class
// order agrees with Less on every input without an equal-instant tie.
func TestLessIsUpstream(t *testing.T) {
	configs := []genConfig{
		{nodes: 2},                 // whole-hour instants: equal instants everywhere
		{nodes: 1, sameUIDs: true}, // equal instants and equal UIDs
		{nodes: 2, zeroTimeShare: 3, invalidCosts: true},
		{nodes: 0},                 // all unassigned
		{nodes: 4, distinct: true}, // no ties: the class order must agree
		{nodes: 3, distinct: true, sameUIDs: true}, // distinct instants, equal UIDs
	}
	flags := []struct{ noCost, noLog, zeroNow bool }{{}, {noCost: true}, {noLog: true}, {zeroNow: true}}
	equalInstantPairs, compared := 0, 0
	for ci, cfg := range configs {
		for fi, f := range flags {
			pods := genPods(newRand(uint64(ci*10+fi+1)), 60, testNow, cfg)
			ranks := make([]int, len(pods))
			for i := range ranks {
				ranks[i] = (i / 3) % 2
			}
			now := testNow
			if f.zeroNow {
				now = time.Time{}
			}
			s := ActivePodsWithRanks{Pods: pods, Rank: ranks, Now: metav1.NewTime(now), DisableDeletionCost: f.noCost, DisableLogarithmicScaleDown: f.noLog}
			ref := refSorter{pods: pods, rank: ranks, now: now, noCost: f.noCost, noLogScale: f.noLog}
			cls := classCompare(s)
			tie := s.HasEqualInstantTie()
			for i := range pods {
				for j := range pods {
					want := ref.Less(i, j)
					require.Equal(t, want, s.Less(i, j), "config %d flags %d pair %d,%d: %s", ci, fi, i, j, s.Explain(i, j))
					c := s.Compare(i, j)
					require.Equal(t, want, c < 0)
					require.Equal(t, ref.Less(j, i), c > 0)
					require.Equal(t, c, s.Explain(i, j).Order)
					if !tie {
						require.Equal(t, c, cls(i, j), "no equal-instant tie: class order equals Less")
					}
					if i != j && pods[i].CreationTimestamp.Equal(&pods[j].CreationTimestamp) && !pods[i].CreationTimestamp.IsZero() {
						equalInstantPairs++
					}
					compared++
				}
			}
		}
	}
	t.Logf("%d ordered pairs compared, %d with equal creation instants", compared, equalInstantPairs)
	assert.Positive(t, equalInstantPairs, "equal instants must be exercised")
}

// checkStrictWeak asserts cmp is irreflexive, antisymmetric and transitive,
// with transitive equivalence, over n elements.
func checkStrictWeak(t testing.TB, n int, cmp func(i, j int) int) {
	c := make([][]int, n)
	for i := range c {
		c[i] = make([]int, n)
		for j := range c[i] {
			c[i][j] = cmp(i, j)
		}
	}
	for i := 0; i < n; i++ {
		if c[i][i] != 0 {
			t.Fatalf("irreflexivity: cmp(%d,%d)=%d", i, i, c[i][i])
		}
		for j := 0; j < n; j++ {
			if c[i][j] != -c[j][i] {
				t.Fatalf("antisymmetry: cmp(%d,%d)=%d, cmp(%d,%d)=%d", i, j, c[i][j], j, i, c[j][i])
			}
			for k := 0; k < n; k++ {
				if c[i][j] < 0 && c[j][k] < 0 && c[i][k] >= 0 {
					t.Fatalf("transitivity: %d<%d<%d but cmp(%d,%d)=%d", i, j, k, i, k, c[i][k])
				}
				if c[i][j] == 0 && c[j][k] == 0 && c[i][k] != 0 {
					t.Fatalf("equivalence transitivity: %d~%d~%d but cmp(%d,%d)=%d", i, j, k, i, k, c[i][k])
				}
			}
		}
	}
}

// FuzzOrder generates pods from the fuzzer's seed and checks the class order
// is a strict weak order on every input: distinct or coarse (whole-hour, many
// equal) instants, distinct or duplicate UIDs, log scaling on or off.
func FuzzOrder(f *testing.F) {
	for _, s := range []struct {
		seed  uint64
		n     uint8
		nodes uint8
		mode  uint8
	}{{1, 10, 2, 0}, {2, 30, 0, 1}, {3, 25, 3, 2}, {4, 40, 1, 3}, {5, 16, 5, 2}, {6, 40, 1, 4}, {7, 33, 2, 4}, {8, 40, 0, 2}} {
		f.Add(s.seed, s.n, s.nodes, s.mode)
	}
	f.Fuzz(func(t *testing.T, seed uint64, n, nodes, mode uint8) {
		n = n%40 + 1
		cfg := genConfig{nodes: int(nodes % 6), zeroTimeShare: 6, invalidCosts: true}
		switch mode % 5 {
		case 0:
			cfg.distinct = true
		case 1:
			cfg.distinct, cfg.sameUIDs = true, true
		case 2: // coarse instants, distinct UIDs: many instant classes
		case 3:
			cfg.distinct = true
		case 4: // coarse instants and duplicate UIDs: classes sharing a representative
			cfg.sameUIDs = true
		}
		pods := genPods(newRand(seed), int(n), testNow, cfg)
		ranks := make([]int, len(pods))
		for i := range ranks {
			ranks[i] = int(seed>>uint(i%60)) & 1
		}
		now := metav1.NewTime(testNow)
		if mode%5 == 3 {
			now = metav1.Time{} // plain comparisons
		}
		s := ActivePodsWithRanks{Pods: pods, Rank: ranks, Now: now}
		cls := classCompare(s)
		checkStrictWeak(t, len(pods), cls)
		if !s.HasEqualInstantTie() {
			// Without equal instants Less is the same strict weak order.
			checkStrictWeak(t, len(pods), s.Compare)
		}
		// Select and Sorted agree with a stable sort on the same order.
		pos := make([]int, len(pods))
		for i := range pos {
			pos[i] = i
		}
		sort.SliceStable(pos, func(a, b int) bool { return cls(pos[a], pos[b]) < 0 })
		sorted := make([]*v1.Pod, len(pods))
		for i, p := range pos {
			sorted[i] = pods[p]
		}
		assert.Equal(t, sorted, s.Sorted())
		// sort.Sort over Less (upstream's relation) never panics.
		cp := ActivePodsWithRanks{Pods: append([]*v1.Pod(nil), pods...), Rank: append([]int(nil), ranks...), Now: now}
		assert.NotPanics(t, func() { sort.Sort(cp) })
		assert.ElementsMatch(t, pods, cp.Pods)
		k := int(seed % uint64(n+1))
		if k > 0 && k < len(pods) {
			assert.Equal(t, sorted[:k], s.Select(k))
		}
	})
}

// TestSelectionMatchesFullSort checks that partial selection returns exactly
// the prefix of the full order for every diff, including with heavy ties,
// and on inputs large enough for several quickselect rounds.
func TestSelectionMatchesFullSort(t *testing.T) {
	for _, n := range []int{13, 100, 2000} {
		// Coarse instants (many instant classes), distinct instants with equal
		// UIDs, coarse instants with equal UIDs, and distinct instants.
		for _, cfg := range []genConfig{{nodes: 3}, {nodes: 1, sameUIDs: true, distinct: true}, {nodes: 2, sameUIDs: true}, {nodes: 8, distinct: true}} {
			pods := genPods(newRand(uint64(n)), n, testNow, cfg)
			s := ActivePodsWithRanks{Pods: pods, Rank: make([]int, n), Now: metav1.NewTime(testNow)}
			full := s.Sorted()
			for _, k := range []int{1, 2, n / 10, n / 2, n - 2, n - 1} {
				if k <= 0 {
					continue
				}
				got := s.Select(k)
				require.Len(t, got, k)
				for i := range got {
					require.Same(t, full[i], got[i], "n=%d k=%d cfg=%+v position %d", n, k, cfg, i)
				}
			}
		}
	}
}

// TestSelectKAdversarial drives the heap fallback: an already sorted and a
// reversed input, where median-of-three still works, and a comparator-heavy
// input with all elements equivalent.
func TestSelectKAdversarial(t *testing.T) {
	n := 500
	pods := genPods(newRand(3), n, testNow, genConfig{nodes: 2, distinct: true})
	s := ActivePodsWithRanks{Pods: pods, Rank: make([]int, n), Now: metav1.NewTime(testNow)}
	full := s.Sorted()
	rev := make([]*v1.Pod, n)
	for i := range full {
		rev[n-1-i] = full[i]
	}
	for name, in := range map[string][]*v1.Pod{"sorted": full, "reversed": rev} {
		t.Run(name, func(t *testing.T) {
			ss := ActivePodsWithRanks{Pods: in, Rank: make([]int, n), Now: s.Now}
			assert.Equal(t, full[:37], ss.Select(37))
		})
	}
	t.Run("heap fallback", func(t *testing.T) {
		o := &order{pol: newPolicy(testNow, false, false), keys: make([]sortKey, n)}
		ents := make([]entry, n)
		for i := range ents {
			o.pol.makeKey(&o.keys[i], full[n-1-i], 0, i)
			ents[i] = entry{head: o.keys[i].head, fast: fastReady(&o.keys[i], &o.pol), idx: int32(i)}
		}
		o.heapSelect(ents, 50)
		got := append([]entry(nil), ents[:50]...)
		sort.Slice(got, func(a, b int) bool { return o.cmp(got[a], got[b]) < 0 })
		for i, e := range got {
			assert.Same(t, full[i], o.keys[e.idx].pod)
		}
	})
}

func TestAllocationsConstant(t *testing.T) {
	allocs := map[int]float64{}
	for _, n := range []int{1000, 10000} {
		pods := genPods(newRand(1), n, testNow, genConfig{nodes: 50, distinct: true})
		sel := NewSelector(WithNow(testNow))
		sel.PodsToDelete(pods, pods, n/20) // warm the pool
		allocs[n] = testing.AllocsPerRun(20, func() { sel.PodsToDelete(pods, pods, n/20) })
	}
	// Without the race detector this is 2 (result and sort closure). The race
	// detector makes sync.Pool drop a share of Puts at random, which adds a
	// few pool refills on average, so allow slack without letting a
	// per-pod allocation (thousands) through.
	assert.LessOrEqual(t, allocs[1000], 10.0, fmt.Sprint(allocs))
	assert.InDelta(t, allocs[1000], allocs[10000], 4, "allocations must not grow with n: %v", allocs)
}

func TestUIDPrefixOrder(t *testing.T) {
	uids := []string{"", "a", "a\x00", "a\x01", "ab", "abcdefgh", "abcdefgh0", "abcdefgi", "b", "\xff", "12345678-aaaa", "12345678-aaab", "9"}
	for _, x := range uids {
		for _, y := range uids {
			a := sortKey{uid: types.UID(x), uidHead: uidPrefix(types.UID(x))}
			b := sortKey{uid: types.UID(y), uidHead: uidPrefix(types.UID(y))}
			want := 0
			if x < y {
				want = -1
			} else if x > y {
				want = 1
			}
			assert.Equal(t, want, cmpUID(&a, &b), "%q vs %q", x, y)
		}
	}
}
