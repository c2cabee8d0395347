// Package podranking decides which pods a controller deletes first when it
// scales down, with the order of the ReplicaSet controller in Kubernetes
// v1.37: unassigned, pending, not ready and cheap (pod-deletion-cost) pods
// first, then pods sharing a node with more related pods, then the more
// recently ready, the more restarted and the more recently created, with
// times compared on a log2 scale of age.
//
// PodsToDelete and Selector.PodsToDelete return exactly the pods upstream's
// getPodsToDelete returns for the same input slice: each pod's rule inputs
// are extracted once into a compact key, and the keys are sorted with
// exactly the decisions Go's sort.Sort makes with upstream's relation, but
// only as far as the first diff positions need, so the answer is upstream's
// even where that relation is not transitive. The caller's slice is never
// reordered.
//
// A Selector fixes the policy: WithClock or WithNow for the reference time,
// WithoutDeletionCost and WithoutLogarithmicScaleDown for upstream's feature
// gates, extension rankers (WithRankersFirst, WithRankersLast, ZoneSpread),
// and WithConsistentTies for a strict weak order in place of upstream's.
// Selector.Rank prepares one ranking that serves both the choice
// (Ranking.PodsToDelete, Ranking.At, Ranking.Order) and its explanations
// (Ranking.Explain, a Decision naming the rule that ordered two pods).
// ActivePodsWithRanks is upstream's sort.Interface, for drop-in migration.
package podranking
