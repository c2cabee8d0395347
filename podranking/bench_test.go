package podranking

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var benchSizes = []int{100, 1_000, 10_000, 100_000}

var (
	benchMu   sync.Mutex
	benchPool = map[int][]*v1.Pod{}
)

// benchPods returns a realistic mix (most pods running and ready, a few
// pending, costs, restarts, sidecars) spread over N/10 nodes, cached per N.
func benchPods(n int) []*v1.Pod {
	benchMu.Lock()
	defer benchMu.Unlock()
	if p, ok := benchPool[n]; ok {
		return p
	}
	p := genPods(newRand(uint64(n)), n, testNow, genConfig{nodes: max(n/10, 1), distinct: true, invalidCosts: true})
	benchPool[n] = p
	return p
}

// BenchmarkPodsToDelete is the fast path: one key per pod, partial selection.
func BenchmarkPodsToDelete(b *testing.B) {
	for _, n := range benchSizes {
		pods := benchPods(n)
		sel := NewSelector(WithNow(testNow))
		for _, pct := range []int{5, 50} {
			diff := n * pct / 100
			b.Run(fmt.Sprintf("N=%d/diff=%d%%", n, pct), func(b *testing.B) {
				b.ReportAllocs()
				sel.PodsToDelete(pods, pods, diff) // fill the scratch pool outside the measurement
				for b.Loop() {
					sel.PodsToDelete(pods, pods, diff)
				}
			})
		}
	}
}

// BenchmarkOrder is a full ordering of N pods through the key-based path.
func BenchmarkOrder(b *testing.B) {
	for _, n := range benchSizes {
		pods := benchPods(n)
		sel := NewSelector(WithNow(testNow))
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			sel.Order(pods, pods) // fill the scratch pool outside the measurement
			for b.Loop() {
				sel.Order(pods, pods)
			}
		})
	}
}

// BenchmarkBaselineSortThenSlice is the baseline: upstream's getPodsToDelete
// (rank by related pods on the same node, sort.Sort, slice) with a
// sort.Interface of upstream semantics that re-derives everything in every
// Less (refSorter), for diff = 5% and 50% (the slice is free, so both cost
// one full sort). The input is copied first because upstream sorts in place.
func BenchmarkBaselineSortThenSlice(b *testing.B) {
	for _, n := range benchSizes {
		pods := benchPods(n)
		for _, pct := range []int{5, 50} {
			diff := n * pct / 100
			b.Run(fmt.Sprintf("N=%d/diff=%d%%", n, pct), func(b *testing.B) {
				b.ReportAllocs()
				work := make([]*v1.Pod, n)
				for b.Loop() {
					copy(work, pods)
					ranked := RankByRelatedPodsOnSameNode(work, pods)
					sort.Sort(refSorter{pods: work, rank: ranked.Rank, now: testNow})
					_ = work[:diff]
				}
			})
		}
	}
}

// BenchmarkSortActivePodsWithRanks sorts through the exported sort.Interface,
// which extracts two keys per comparison: the compatibility path.
func BenchmarkSortActivePodsWithRanks(b *testing.B) {
	for _, n := range benchSizes {
		pods := benchPods(n)
		ranks := RankByRelatedPodsOnSameNode(pods, pods).Rank
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			work := make([]*v1.Pod, n)
			rk := make([]int, n)
			for b.Loop() {
				copy(work, pods)
				copy(rk, ranks)
				sort.Sort(ActivePodsWithRanks{Pods: work, Rank: rk, Now: metav1.NewTime(testNow)})
			}
		})
	}
}

// BenchmarkPodsToDeleteWholeSeconds is BenchmarkPodsToDelete on timestamps
// truncated to whole seconds, as the API server stores them, so many pods
// share an instant and the instant classes of rules 6 and 8 are non-trivial.
func BenchmarkPodsToDeleteWholeSeconds(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		pods := make([]*v1.Pod, n)
		for i, p := range benchPods(n) {
			q := p.DeepCopy()
			q.CreationTimestamp = metav1.NewTime(q.CreationTimestamp.Truncate(time.Second))
			for c := range q.Status.Conditions {
				q.Status.Conditions[c].LastTransitionTime = metav1.NewTime(q.Status.Conditions[c].LastTransitionTime.Truncate(time.Second))
			}
			pods[i] = q
		}
		sel := NewSelector(WithNow(testNow))
		diff := n * 5 / 100
		b.Run(fmt.Sprintf("N=%d/diff=5%%", n), func(b *testing.B) {
			b.ReportAllocs()
			sel.PodsToDelete(pods, pods, diff)
			for b.Loop() {
				sel.PodsToDelete(pods, pods, diff)
			}
		})
	}
}

// BenchmarkAssignClasses isolates the instant-class grouping that every
// ranking under log scaling adds (a hash pass over the ready pods, then one
// over the few rule-8 candidates).
func BenchmarkAssignClasses(b *testing.B) {
	pods := benchPods(10_000)
	pol := newPolicy(testNow, false, false)
	keys := make([]sortKey, len(pods))
	var cs classScratch
	b.ReportAllocs()
	for b.Loop() {
		for i, p := range pods {
			pol.makeKey(&keys[i], p, 0, i)
		}
		cs.assignClasses(keys, &pol)
	}
}

// BenchmarkMakeKeys is the key extraction alone, the baseline for
// BenchmarkAssignClasses.
func BenchmarkMakeKeys(b *testing.B) {
	pods := benchPods(10_000)
	pol := newPolicy(testNow, false, false)
	keys := make([]sortKey, len(pods))
	b.ReportAllocs()
	for b.Loop() {
		for i, p := range pods {
			pol.makeKey(&keys[i], p, 0, i)
		}
	}
}
