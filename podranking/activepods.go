package podranking

import (
	"github.com/ctrlkit/ctrlkit/internal/partialsort"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ActivePodsWithRanks is upstream's sortable list of pods to delete, for
// callers that want sort.Sort. Less(i, j) is true when pod i should be deleted
// before pod j, by these rules, each consulted only when all earlier ones tie:
//
//  1. a pod not assigned to a node before an assigned one;
//  2. phase Pending (or any unlisted phase) before Unknown before Running;
//  3. not ready before ready;
//  4. lower pod-deletion-cost first (invalid values count as 0);
//  5. higher Rank first;
//  6. when both are ready, the more recently ready first;
//  7. more restarts first, regular containers before sidecars;
//  8. the more recently created first.
//
// Rules 6 and 8: equal instants fall through to the next rule; a zero time
// goes first; with a zero Now or DisableLogarithmicScaleDown the more recent
// time goes first; otherwise the younger power-of-two bucket of age goes
// first and, within one bucket, the smaller UID. This relation is upstream's
// v1.37 Less, pair by pair. Like upstream's it is not transitive on every
// input (pods sharing an instant next to other instants of their bucket), so
// the result of a sort depends on the algorithm: sort.Sort over this type,
// Select and Sorted all return what sort.Sort over upstream's type returns.
//
// The zero value of the flags is upstream's default: deletion cost and
// logarithmic scale-down are on. Each Less re-extracts two keys; Select and
// Sorted extract each pod's key once and are much faster.
type ActivePodsWithRanks struct {
	// Pods is the list to order.
	Pods []*v1.Pod
	// Rank holds one rank per pod, typically the number of active related
	// pods on the same node; missing entries read as 0.
	Rank []int
	// Now is the reference time for logarithmic scale-down; zero disables it.
	Now metav1.Time
	// DisableDeletionCost ignores the pod-deletion-cost annotation (rule 4).
	DisableDeletionCost bool
	// DisableLogarithmicScaleDown compares times plainly in rules 6 and 8.
	DisableLogarithmicScaleDown bool
}

// Len implements sort.Interface.
func (s ActivePodsWithRanks) Len() int { return len(s.Pods) }

// Swap implements sort.Interface.
func (s ActivePodsWithRanks) Swap(i, j int) {
	s.Pods[i], s.Pods[j] = s.Pods[j], s.Pods[i]
	if i < len(s.Rank) && j < len(s.Rank) {
		s.Rank[i], s.Rank[j] = s.Rank[j], s.Rank[i]
	}
}

// Less implements sort.Interface with upstream's relation.
func (s ActivePodsWithRanks) Less(i, j int) bool { return s.Compare(i, j) < 0 }

// Compare returns -1 when Less(i, j), 1 when Less(j, i), 0 when neither.
func (s ActivePodsWithRanks) Compare(i, j int) int {
	pol := s.policy()
	var a, b key
	pol.makeKey(&a, s.Pods[i], s.rank(i), i)
	pol.makeKey(&b, s.Pods[j], s.rank(j), j)
	_, c := pol.compare(&a, &b)
	return c
}

// Explain says which rule of Less orders pod i against pod j, with the
// compared values; its Order equals Compare(i, j).
func (s ActivePodsWithRanks) Explain(i, j int) Decision {
	r := s.prepare([]*v1.Pod{s.Pods[i], s.Pods[j]}, []int{s.rank(i), s.rank(j)}, make([]key, 2), nil)
	return r.explain(&r.keys[0], &r.keys[1])
}

// Select returns the first diff pods of Sorted without reordering s.Pods.
// diff <= 0 returns nil; diff >= Len returns a copy of all pods in input
// order, as upstream's getPodsToDelete does.
func (s ActivePodsWithRanks) Select(diff int) []*v1.Pod {
	if diff <= 0 {
		return nil
	}
	if diff >= len(s.Pods) {
		return slices.Clone(s.Pods)
	}
	return s.sorted(diff)
}

// Sorted returns the pods in the order sort.Sort(s) leaves them, without
// modifying s, with one key extraction per pod.
func (s ActivePodsWithRanks) Sorted() []*v1.Pod { return s.sorted(len(s.Pods)) }

// sorted returns the first n pods of the sorted order.
func (s ActivePodsWithRanks) sorted(n int) []*v1.Pod {
	b := getBuffers(len(s.Pods))
	defer putBuffers(b)
	r := s.prepare(s.Pods, s.Rank, b.keys, b.order)
	r.sortTo(n)
	return r.first(n)
}

func (s ActivePodsWithRanks) rank(i int) int {
	if i < len(s.Rank) {
		return s.Rank[i]
	}
	return 0
}

func (s ActivePodsWithRanks) policy() policy {
	return newPolicy(s.Now.Time, s.DisableDeletionCost, s.DisableLogarithmicScaleDown, false)
}

func (s ActivePodsWithRanks) prepare(pods []*v1.Pod, ranks []int, keys []key, order []partialsort.Entry) *Ranking {
	return defaultSelector.prepare(pods, func(i int, _ *v1.Pod) int {
		if i < len(ranks) {
			return ranks[i]
		}
		return 0
	}, s.policy(), keys, order)
}

// RankByRelatedPodsOnSameNode wraps podsToRank (aliasing it, as upstream
// does) with ranks equal to the number of active pods in relatedPods on the
// same node name; unscheduled pods share the node name "". Now is the current
// time. Nil entries in relatedPods are ignored and a nil entry in podsToRank
// gets rank 0.
func RankByRelatedPodsOnSameNode(podsToRank, relatedPods []*v1.Pod) ActivePodsWithRanks {
	ranks := make([]int, len(podsToRank))
	counts := countOnNodes(podsToRank, relatedPods, func(i int, _ *v1.Pod, slot int32) { ranks[i] = int(slot) })
	for i, slot := range ranks {
		ranks[i] = 0 // a nil pod's rank
		if slot >= 0 {
			ranks[i] = counts[slot]
		}
	}
	return ActivePodsWithRanks{Pods: podsToRank, Rank: ranks, Now: metav1.Now()}
}
