// Package podranking decides which pods a controller deletes first when it
// scales down, with the order of the ReplicaSet controller in Kubernetes
// v1.36 (ActivePodsWithRanks: assignment, phase, readiness, pod deletion cost,
// co-location rank, logarithmic ready time, restarts, logarithmic creation
// time), and does it fast.
//
// Upstream recomputes readiness, re-parses the deletion-cost annotation and
// rescans conditions inside every comparison of a full sort. This package
// extracts one compact key per pod, once, and PodsToDelete selects the diff
// pods to delete by partial selection, sorting only those, without reordering
// the caller's slice. Beyond upstream: rules as options (WithoutDeletionCost,
// WithoutLogarithmicScaleDown, WithNow, WithClock), extra Rankers in front of
// or behind the built-in rules (WithRankersFirst, WithRankersLast), a shipped
// ZoneSpread ranker, and Decision, which explains which rule ordered two pods.
//
// Two orders. ActivePodsWithRanks's sort.Interface (Less, and Compare and
// Explain on it) is upstream's relation verbatim, pairwise and stateless, for
// drop-in migration: sort.Sort over it behaves as upstream's does, including
// in the equal-instant corner below. Selector.PodsToDelete, Selector.Order,
// PodsToDelete and the Select and Sorted methods use the instant class order,
// a strict weak order on every input, which agrees with Less on every input
// without equal instants (HasEqualInstantTie false) and on every same-instant
// pair. Use those when the order must be consistent.
//
// Times (rules 6 and 8). If Now or either time is zero, or log scaling is off,
// a zero time goes first, then the more recent time, and equal times fall
// through to the next rule. Otherwise each time's age falls into bucket
// floor(log2(age in ns)), equal to upstream's math.Log2 on the float64
// duration (read from the float's exponent where Log2 cannot round across an
// integer, else from math.Log2 itself; ages <= 0 are bucket -1), and the
// younger bucket goes first. Within a bucket, Less compares the pods' own UIDs, as upstream; the
// class order compares instant classes (class.go).
//
// The equal-instant corner. Upstream lets two pods whose instants are exactly
// equal fall through to later rules, while pods in the same bucket with
// different instants are ordered by UID. With pods A and B ready at the same
// instant and C ready at another instant of the same bucket, UIDs a < c < b
// and B restarting more than A, upstream says A < C (UID), C < B (UID) and
// B < A (restarts): a cycle, so its sort result depends on the algorithm's
// comparison sequence. Less keeps that relation (sort.Sort tolerates it and
// does not panic). The class order instead groups the pods of one ranking
// that meet at the rule by exact instant; each class is represented by its
// smallest UID, and the rule compares (bucket, representative). Same-instant
// pods share the key and fall through exactly as upstream (API timestamps are
// whole seconds, so this is the common case: of two pods ready in the same
// second, the one that restarted goes first); pods with different instants
// compare by their classes' representatives, which are their own UIDs
// whenever no other pod shares their instant. Above, class {A, B} is
// represented by a, so B < A < C. The class order differs from Less only on
// pairs across two classes one of which holds several pods (B against C
// above). HasEqualInstantTie reports whether an input contains such classes,
// so differential tests can skip it.
//
// Deliberate differences from upstream (issue 5):
//   - PodsToDelete never reorders its input and returns a new slice; upstream
//     sorts the caller's slice in place.
//   - In the class order (not in Less), different instants within a log
//     bucket compare by instant class representative, not by the pods' own
//     UIDs, when a class holds several pods (above): upstream's relation is
//     cyclic there.
//   - In the class order, pods every rule finds equivalent keep their input
//     order; upstream's unstable sort.Sort may permute them.
//   - Nil pods, a Rank shorter than Pods, diff < 0 and diff > len do not
//     panic: nil pods go last, missing ranks are 0, diff <= 0 selects none and
//     diff >= len selects all in input order.
//   - Times are compared on wall clocks only (monotonic readings stripped).
//   - No sorting_deletion_age_ratio metric, so no integer divide-by-zero.
//   - The feature gates are per call options, not process-wide globals.
package podranking
