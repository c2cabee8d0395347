package podranking

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ctrlkit/ctrlkit/podstate"
)

// ActivePodsWithRanks is upstream's sortable list of pods to delete, kept for
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
// Rules 6 and 8 compare times as described in the package documentation. The
// zero value of the flags is upstream's default: deletion cost and
// logarithmic scale-down are on.
//
// Two orders live on this type; pick by need:
//
//   - Less, Compare and Explain are upstream v1.36's relation verbatim, pair
//     by pair and without state, for drop-in migration: in one log2 bucket,
//     different instants compare by the pods' own UIDs and exactly equal
//     instants fall through to the later rules. Like upstream's, the relation
//     is not a strict weak order when equal instants meet other instants of
//     their bucket (see the package documentation), so sort.Sort over it
//     returns an order that depends on the algorithm; it never panics.
//   - Select and Sorted (like Selector.PodsToDelete and Order) use the
//     instant class order, a strict weak order on every input. It agrees with
//     Less on every pair of every input for which HasEqualInstantTie is false,
//     and on every same-instant pair.
//
// Tolerated misuse: a nil pod sorts after every real pod; a Rank shorter than
// Pods reads missing entries as 0 (Swap then keeps the existing entries
// aligned only where both exist, so prefer Select or Sorted, which read each
// rank once); a zero Now compares times plainly.
//
// Every call to Less re-extracts two keys; Select and Sorted extract each
// pod's key once and are much faster.
type ActivePodsWithRanks struct {
	// Pods is the list to order.
	Pods []*v1.Pod
	// Rank holds one rank per pod, typically the number of active related
	// pods on the same node.
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

// Less implements sort.Interface: pod i is deleted before pod j, by
// upstream's relation (not a strict weak order on every input; see the type).
func (s ActivePodsWithRanks) Less(i, j int) bool { return s.Compare(i, j) < 0 }

// Compare returns -1 when Less(i, j), 1 when Less(j, i), 0 when neither. It
// reads only pods i and j: keys fresh from makeKey carry one-pod instant
// classes (the pods' own UIDs), on which compareBuiltin is upstream's Less.
func (s ActivePodsWithRanks) Compare(i, j int) int {
	pol := s.policy()
	var a, b sortKey
	pol.makeKey(&a, s.Pods[i], s.rank(i), i)
	pol.makeKey(&b, s.Pods[j], s.rank(j), j)
	_, c := pol.compareBuiltin(&a, &b)
	return c
}

func (s ActivePodsWithRanks) rank(i int) int {
	if i < len(s.Rank) {
		return s.Rank[i]
	}
	return 0
}

func (s ActivePodsWithRanks) policy() policy {
	return newPolicy(s.Now.Time, s.DisableDeletionCost, s.DisableLogarithmicScaleDown)
}

// Explain says which rule of Less orders pod i against pod j, with the
// compared values; its Order equals Compare(i, j). For the rule under the
// class order of Select and Sorted, use Selector.Explain.
func (s ActivePodsWithRanks) Explain(i, j int) Decision {
	var keys [2]sortKey
	o := order{pol: s.policy(), keys: keys[:]}
	o.pol.makeKey(&o.keys[0], s.Pods[i], s.rank(i), i)
	o.pol.makeKey(&o.keys[1], s.Pods[j], s.rank(j), j)
	return o.explain(0, 1)
}

// Select returns the first diff pods in the instant class order (not Less's
// relation; see the type) without sorting the rest and without reordering
// s.Pods. Pods the rules find equivalent keep
// their input order. diff <= 0 returns nil; diff >= Len returns a copy of all
// pods in input order, as upstream's PodsToDelete does.
func (s ActivePodsWithRanks) Select(diff int) []*v1.Pod {
	if diff <= 0 {
		return nil
	}
	if diff >= len(s.Pods) {
		return append([]*v1.Pod(nil), s.Pods...)
	}
	sc := defaultSelector.acquire()
	defer defaultSelector.release(sc)
	o := defaultSelector.prepare(sc, s.Pods, s.Rank, false, s.policy())
	return o.take(sc.ents, diff)
}

// Sorted returns all pods in the instant class order, leaving s unchanged,
// with one key extraction per pod. Where HasEqualInstantTie is false it is
// sort.Stable(s) on a copy; otherwise it is the consistent order Less lacks.
func (s ActivePodsWithRanks) Sorted() []*v1.Pod {
	if len(s.Pods) == 0 {
		return nil
	}
	sc := defaultSelector.acquire()
	defer defaultSelector.release(sc)
	o := defaultSelector.prepare(sc, s.Pods, s.Rank, false, s.policy())
	return o.sortAll(sc.ents)
}

// RankByRelatedPodsOnSameNode wraps podsToRank (aliasing it, as upstream
// does) with ranks equal to the number of active pods in relatedPods on the
// same node name; unscheduled pods share the node name "". Now is the current
// time. Nil entries in relatedPods are ignored and a nil entry in podsToRank
// gets rank 0.
func RankByRelatedPodsOnSameNode(podsToRank, relatedPods []*v1.Pod) ActivePodsWithRanks {
	onNode := make(map[string]int)
	for _, p := range relatedPods {
		if podstate.IsActive(p) {
			onNode[p.Spec.NodeName]++
		}
	}
	ranks := make([]int, len(podsToRank))
	for i, p := range podsToRank {
		if p != nil {
			ranks[i] = onNode[p.Spec.NodeName]
		}
	}
	return ActivePodsWithRanks{Pods: podsToRank, Rank: ranks, Now: metav1.Now()}
}
