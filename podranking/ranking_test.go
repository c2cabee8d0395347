package podranking

import (
	"slices"
	"sort" //nolint:depguard // the reference is upstream's algorithm: sort.Sort over its Less and Swap
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestSameReadySecondNextToAnotherInstant is the smallest input on which the
// instant class order and upstream choose differently. A (uid a) and B (uid
// z) became ready in the same second 30 h ago, C (uid m) 31 h ago, in the
// same log2 bucket; one node, no cost, A created after B. Upstream's relation
// is the total order A < C < B here (A and B fall through to the creation
// time), so it deletes [A C]; the class order represents {A, B} by a and
// deletes [A B].
func TestSameReadySecondNextToAnotherInstant(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	ready := metav1.NewTime(now.Add(-30 * time.Hour))
	a := fixture("A", "node", v1.PodRunning, true, 0, 0, ready, metav1.NewTime(now.Add(-31*time.Hour)), nil)
	b := fixture("B", "node", v1.PodRunning, true, 0, 0, ready, metav1.NewTime(now.Add(-32*time.Hour)), nil)
	c := fixture("C", "node", v1.PodRunning, true, 0, 0, metav1.NewTime(now.Add(-31*time.Hour)), metav1.NewTime(now.Add(-33*time.Hour)), nil)
	a.UID, b.UID, c.UID = "a", "z", "m"
	pol := newPolicy(now, false, false, false)
	require.Equal(t, pol.bucket(ready.Time), pol.bucket(now.Add(-31*time.Hour)), "30 h and 31 h must share a log2 bucket")

	for _, pods := range permutations([]*v1.Pod{a, b, c}) {
		want := refPodsToDelete(slices.Clone(pods), pods, 2, now)
		require.Equal(t, []string{"A", "C"}, names(want), "the reference must delete [A C] from %v", names(pods))
		assert.Equal(t, names(want), names(NewSelector(WithNow(now)).PodsToDelete(pods, pods, 2)), "input %v", names(pods))
		assert.Equal(t, []string{"A", "B"}, names(NewSelector(WithNow(now), WithConsistentTies()).PodsToDelete(pods, pods, 2)), "class order, input %v", names(pods))
	}
}

func permutations(pods []*v1.Pod) [][]*v1.Pod {
	if len(pods) <= 1 {
		return [][]*v1.Pod{slices.Clone(pods)}
	}
	var out [][]*v1.Pod
	for i := range pods {
		rest := slices.Delete(slices.Clone(pods), i, i+1)
		for _, p := range permutations(rest) {
			out = append(out, append([]*v1.Pod{pods[i]}, p...))
		}
	}
	return out
}

// TestCyclicCornerFollowsSortSort: with A and B ready at the same instant, C
// at another instant of their bucket, UIDs a < c < b and B restarting more,
// upstream's relation is the cycle A < C < B < A. Whatever the input order,
// every selection API returns what sort.Sort over the reference leaves.
func TestCyclicCornerFollowsSortSort(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	same := metav1.NewTime(now.Add(-3 * time.Hour))
	created := metav1.NewTime(now.Add(-24 * time.Hour))
	a := fixture("a", "node", v1.PodRunning, true, 0, 0, same, created, nil)
	b := fixture("b", "node", v1.PodRunning, true, 5, 0, same, created, nil)
	c := fixture("c", "node", v1.PodRunning, true, 0, 0, metav1.NewTime(now.Add(-4*time.Hour)), created, nil)
	a.UID, b.UID, c.UID = types.UID("a"), types.UID("c-b"), types.UID("b-c")

	ref := refSorter{pods: []*v1.Pod{a, b, c}, rank: []int{0, 0, 0}, now: now}
	require.True(t, ref.Less(0, 2) && ref.Less(2, 1) && ref.Less(1, 0), "the fixture must be cyclic")
	s := ActivePodsWithRanks{Pods: []*v1.Pod{a, b, c}, Rank: []int{0, 0, 0}, Now: metav1.NewTime(now)}
	for _, p := range [][2]int{{0, 2}, {2, 1}, {1, 0}} {
		assert.True(t, s.Less(p[0], p[1]))
		assert.False(t, s.Less(p[1], p[0]))
	}
	outcomes := map[string]bool{}
	for _, pods := range permutations([]*v1.Pod{a, b, c}) {
		want := refPodsToDelete(slices.Clone(pods), pods, 2, now)
		full := refSorter{pods: slices.Clone(pods), rank: []int{0, 0, 0}, now: now}
		sort.Sort(full)
		outcomes[names(full.pods)[0]] = true
		sel := NewSelector(WithNow(now))
		assert.Equal(t, names(want), names(sel.PodsToDelete(pods, pods, 2)))
		assert.Equal(t, names(full.pods), names(sel.Order(pods, pods)))
		ap := ActivePodsWithRanks{Pods: pods, Rank: []int{0, 0, 0}, Now: metav1.NewTime(now)}
		assert.Equal(t, names(full.pods), names(ap.Sorted()))
		assert.Equal(t, names(full.pods[:1]), names(ap.Select(1)))
		sorted := ActivePodsWithRanks{Pods: slices.Clone(pods), Rank: []int{0, 0, 0}, Now: metav1.NewTime(now)}
		sort.Sort(sorted)
		assert.Equal(t, names(full.pods), names(sorted.Pods), "sort.Sort over ActivePodsWithRanks")
	}
	assert.Greater(t, len(outcomes), 1, "on a cycle the answer depends on the input order")
}

// TestMatchesReference compares every selection API with sort.Sort over the
// reference relation (upstream's getPodsToDelete) on random inputs, exactly:
// whole-hour instants make equal instants, cycles and equivalent pods common.
func TestMatchesReference(t *testing.T) {
	configs := []genConfig{
		{nodes: 4, distinct: true},
		{nodes: 20, distinct: true, zeroTimeShare: 5, invalidCosts: true},
		{nodes: 3, distinct: false},
		{nodes: 0, distinct: true, sameUIDs: true},
		{nodes: 2, distinct: false, zeroTimeShare: 3},
		{nodes: 1, distinct: false, sameUIDs: true},
	}
	for ci, cfg := range configs {
		for _, n := range []int{1, 2, 7, 40, 300} {
			for seed := uint64(0); seed < 6; seed++ {
				r := newRand(seed*1000 + uint64(ci*100+n))
				pods := genPods(r, n, testNow, cfg)
				related := append(slices.Clone(pods), genPods(r, n/3, testNow, cfg)...)
				input := slices.Clone(pods)
				sel := NewSelector(WithNow(testNow))
				for _, diff := range []int{0, 1, n / 20, n / 2, n - 1, n, n + 3} {
					got := sel.PodsToDelete(pods, related, diff)
					require.Equal(t, input, pods, "input must not be reordered")
					if diff <= 0 {
						assert.Empty(t, got)
						continue
					}
					want := refPodsToDelete(slices.Clone(pods), related, min(diff, n), testNow)
					require.Equal(t, names(want), names(got), "config %d n=%d seed=%d diff=%d", ci, n, seed, diff)
				}
				ranks := RankByRelatedPodsOnSameNode(pods, related).Rank
				full := refSorter{pods: slices.Clone(pods), rank: slices.Clone(ranks), now: testNow}
				sort.Sort(full)
				require.Equal(t, names(full.pods), names(sel.Order(pods, related)), "config %d n=%d seed=%d", ci, n, seed)
				// A Ranking sorts on demand, a prefix at a time: each longer
				// prefix resumes the shorter one and still ends as sort.Sort.
				rk := sel.Rank(pods, related)
				for _, m := range []int{1, n / 20, n / 3, n / 2, n - 2} {
					if m < 1 || m >= n {
						continue
					}
					require.Equal(t, names(full.pods[:m]), names(rk.PodsToDelete(m)), "config %d n=%d seed=%d prefix %d", ci, n, seed, m)
					require.Same(t, full.pods[m], rk.At(m), "config %d n=%d seed=%d At(%d)", ci, n, seed, m)
				}
				require.Equal(t, names(full.pods), names(rk.Order()), "config %d n=%d seed=%d", ci, n, seed)
				ap := ActivePodsWithRanks{Pods: pods, Rank: ranks, Now: metav1.NewTime(testNow)}
				require.Equal(t, names(full.pods), names(ap.Sorted()))
				if n > 1 {
					require.Equal(t, names(full.pods[:n/2]), names(ap.Select(n/2)))
				}
				require.Equal(t, input, pods, "input must not be reordered")
			}
		}
	}
}

// TestRankingServesChoiceAndExplanations: the victims of a Ranking are the
// head of its Order, and each victim's explanation against the first
// survivor says it goes first.
func TestRankingServesChoiceAndExplanations(t *testing.T) {
	pods := genPods(newRand(7), 200, testNow, genConfig{nodes: 5})
	rk := NewSelector(WithNow(testNow)).Rank(pods, pods)
	victims := rk.PodsToDelete(20)
	order := rk.Order()
	require.Equal(t, names(order[:20]), names(victims))
	survivor := order[20]
	for _, v := range victims {
		d := rk.Explain(v, survivor)
		assert.NotEqual(t, 1, d.Order, "%s", d)
	}
	assert.Same(t, survivor, rk.At(20))
	assert.PanicsWithValue(t, "podranking: Ranking.At: position 200 out of range [0, 200)", func() { rk.At(200) })
	assert.Panics(t, func() { rk.At(-1) })
	// A pod outside the ranking is explained as if appended to it.
	extra := fixture("extra", "", v1.PodPending, false, 0, 0, metav1.Time{}, metav1.Time{}, nil)
	last := order[len(order)-1]
	require.NotEmpty(t, last.Spec.NodeName)
	d := rk.Explain(extra, last)
	assert.Equal(t, RuleAssignment, d.Rule)
	assert.True(t, d.AFirst())
}

// TestRankingConcurrentUse: one Ranking read from several goroutines (run
// under -race) gives every reader the same answers.
func TestRankingConcurrentUse(t *testing.T) {
	pods := genPods(newRand(9), 300, testNow, genConfig{nodes: 3})
	rk := NewSelector(WithNow(testNow)).Rank(pods, pods)
	want := names(NewSelector(WithNow(testNow)).Order(pods, pods))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			assert.Equal(t, want, names(rk.Order()))
			assert.Equal(t, want[:30], names(rk.PodsToDelete(30)))
			assert.Equal(t, want[31], rk.At(31).Name)
			_ = rk.Explain(pods[0], pods[1])
		})
	}
	wg.Wait()

	// Explanations before any sort, beside a partial sort: both read
	// restart counts into the keys on first use.
	// Neighbours in the deletion order are the pairs that reach the later
	// rules, restarts among them.
	ordered := NewSelector(WithNow(testNow)).Order(pods, pods)
	fresh := NewSelector(WithNow(testNow)).Rank(pods, pods)
	for g := range 4 {
		wg.Go(func() {
			if g%2 == 0 {
				assert.Equal(t, want[:10], names(fresh.PodsToDelete(10)))
			}
			for i := range len(ordered) - 1 {
				d := fresh.Explain(ordered[i], ordered[i+1])
				assert.Equal(t, rk.Explain(ordered[i], ordered[i+1]), d)
			}
		})
	}
	wg.Wait()
}

// TestConsistentTiesIsStrictWeakOrder: the opt-in class order is
// irreflexive and transitive on inputs full of shared instants, and agrees
// with upstream wherever every instant is distinct.
func TestConsistentTiesIsStrictWeakOrder(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		pods := genPods(newRand(seed), 40, testNow, genConfig{nodes: 2})
		rk := NewSelector(WithNow(testNow), WithConsistentTies()).Rank(pods, pods)
		n := len(pods)
		compare := func(i, j int) int { return rk.compare(&rk.keys[i], &rk.keys[j]) }
		for i := range n {
			require.Zero(t, compare(i, i))
			for j := range n {
				cij := compare(i, j)
				require.Equal(t, -cij, compare(j, i), "antisymmetry")
				for k := range n {
					if cij < 0 && compare(j, k) < 0 {
						require.Negative(t, compare(i, k), "transitivity %d %d %d", i, j, k)
					}
					if cij == 0 && compare(j, k) == 0 {
						require.Zero(t, compare(i, k), "transitive equivalence %d %d %d", i, j, k)
					}
				}
			}
		}
	}
	for seed := uint64(0); seed < 20; seed++ {
		pods := genPods(newRand(seed), 100, testNow, genConfig{nodes: 4, distinct: true})
		want := refPodsToDelete(slices.Clone(pods), pods, 30, testNow)
		got := NewSelector(WithNow(testNow), WithConsistentTies()).PodsToDelete(pods, pods, 30)
		require.Equal(t, names(want), names(got), "distinct instants: the class order is upstream's")
	}
}

// TestMonotonicReadings: pods built in-process from time.Now carry monotonic
// clock readings, which upstream's time comparisons read when both times
// have one; every selection API still returns the reference's answer.
func TestMonotonicReadings(t *testing.T) {
	now := time.Now()
	require.True(t, hasMonotonic(now))
	for seed := uint64(0); seed < 14; seed++ {
		pods := genPods(newRand(seed), 120, now, genConfig{nodes: 3})
		withReading := func(t metav1.Time) metav1.Time {
			if t.IsZero() {
				return t
			}
			return metav1.NewTime(now.Add(t.Sub(now))) // the same instant, with now's reading
		}
		for i, p := range pods {
			if seed%2 == 0 && i%2 == 0 {
				continue // a mix of times with and without readings
			}
			p.CreationTimestamp = withReading(p.CreationTimestamp)
			if seed >= 10 {
				// Readings on creation times only: a ranking reads those
				// lazily, so it meets the first reading mid-sort.
				continue
			}
			for j := range p.Status.Conditions {
				p.Status.Conditions[j].LastTransitionTime = withReading(p.Status.Conditions[j].LastTransitionTime)
			}
		}
		require.True(t, hasMonotonic(pods[1].CreationTimestamp.Time) || pods[1].CreationTimestamp.IsZero())
		want := refPodsToDelete(slices.Clone(pods), pods, 40, now)
		require.Equal(t, names(want), names(NewSelector(WithNow(now)).PodsToDelete(pods, pods, 40)), "seed %d", seed)
		ranks := RankByRelatedPodsOnSameNode(pods, pods).Rank
		full := refSorter{pods: slices.Clone(pods), rank: slices.Clone(ranks), now: now}
		sort.Sort(full)
		require.Equal(t, names(full.pods), names(ActivePodsWithRanks{Pods: pods, Rank: ranks, Now: metav1.NewTime(now)}.Sorted()))
	}
}
