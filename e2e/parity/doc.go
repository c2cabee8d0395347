// Package parity proves that ctrlkit equals upstream Kubernetes where it
// should, and measures where it is faster. Everything lives in its tests; this
// file only documents them.
//
// # Differential tests
//
// Each target feeds the same seeded random inputs to ctrlkit and to the
// exported code of k8s.io/kubernetes v1.36.3 that ctrlkit replaces, and fails
// on the first disagreement with a shrunk, minimal input. By default each
// target runs 100,000 cases (10,000 under -race or -short);
// CTRLKIT_PARITY_CASES=n or -long (1,000,000) change that, and
// CTRLKIT_PARITY_SEED or -parity.seed picks other inputs. The flags exist
// only in this package's test binary, so use the environment variables when
// testing several packages at once:
//
//	go test ./parity -long
//	CTRLKIT_PARITY_CASES=2000000 go test ./...
//
// The targets:
//
//   - IsReady, IsAvailable: podstate against pkg/api/v1/pod (IsPodReady,
//     GetPodReadyCondition, IsPodAvailable), around the minReadySeconds
//     boundary to the nanosecond.
//   - DeletionCost: podranking.DeletionCost against
//     pkg/apis/core/helper.GetDeletionCostFromPodAnnotations, value and error
//     presence (plus a fuzz target).
//   - RankingOrder: pods with distinct instants and UIDs, on which upstream's
//     comparator is a strict total order. ctrlkit's Sorted, Select(diff) and
//     Selector.PodsToDelete must equal sort.Sort over
//     pkg/controller.ActivePodsWithRanks followed by a slice, pod for pod;
//     ranks from related pods are checked too.
//   - RankingCornerLess: colliding instants, UIDs and ties. Less must equal
//     upstream's on every ordered pair of every input; nothing is skipped.
//   - RankingCorner: the same inputs; ctrlkit's selection orders (Sorted,
//     Select) must never put a pod after one upstream's Less puts before it.
//   - RankingNoDeletionCost: pairwise Less with the PodDeletionCost gate off,
//     on every input.
//   - Expectations, UIDTrackingExpectations: random operation sequences on
//     pkg/controller's ControllerExpectations and
//     UIDTrackingControllerExpectations and on ctrlkit's; after every step,
//     for every key: SatisfiedExpectations, whether a record exists, its
//     counts, Fulfilled, and the dependent-key set.
//   - ClaimPods: PodControllerRefManager.ClaimPods with the same recording
//     fake pod control on both sides: the pods claimed, error presence, every
//     patch (namespace, name, body byte for byte) and CanAdopt's call count.
//   - DeleteOwnerRefPatch: GenerateDeleteOwnerRefStrategicMergeBytes byte
//     for byte, with strings that need JSON escaping.
//
// # Deliberate differences, skipped by named predicates
//
// Exactly these inputs are skipped; each run logs how many.
//
//   - podranking.HasEqualInstantTie (RankingCorner):
//     two pods whose comparison reaches the log-scaled ready-time or
//     creation-time rule with exactly equal non-zero instants. Upstream falls
//     through to later rules there while pods in the same bucket with other
//     instants are ordered by UID, which can form a cycle.
//     ActivePodsWithRanks.Less reproduces that relation verbatim, pair by
//     pair, so pairwise Less checks no longer need this skip. ctrlkit's
//     selection order (PodsToDelete, Order, Sorted, Select) still lets the
//     equal pair fall through, but orders a pod of another instant in the
//     bucket against it by the smallest UID of the pair's instant class, which
//     keeps that order a strict weak order and can differ from upstream there
//     (podranking's package documentation, issue 5).
//   - innerDeleteKeepsDependentSet (UIDTrackingExpectations): the wrapped
//     record of a key is deleted behind the tracker's back while the tracker
//     holds a dependent-key set for it. ctrlkit drops the orphaned set
//     (GetUIDs returns nil); upstream keeps it and lets it lower a later,
//     unrelated record (expectations package documentation, issue 3).
//
// # Differences checked differently, not skipped
//
//   - Ties. Where upstream's Less finds pods equivalent, sort.Sort (not
//     stable) leaves them in an order that depends on pdqsort's internals;
//     ctrlkit keeps input order. RankingOrder has no ties by construction;
//     RankingCorner checks ctrlkit's order is a valid order under upstream's
//     Less instead of comparing positions.
//   - PodsToDelete never reorders its input (upstream sorts the caller's
//     slice); upstream is given a copy and ctrlkit's input is checked intact.
//   - Errors: ctrlkit wraps with %w where upstream formats with %v, so only
//     the presence of an error is compared, not its text.
//
// # Outside the compared domain
//
// Inputs on which upstream panics or reads hidden global state are not
// generated; ctrlkit's own package tests cover them: nil pods, Rank shorter
// than Pods, diff < 0 or > len (upstream panics); a nil selector (ctrlkit
// matches nothing, upstream panics); the LogarithmicScaleDown gate off (GA and
// locked in v1.36, so upstream cannot be switched); expiry of expectations
// (upstream reads the real clock with a 5-minute TTL, so no sequence here
// lives long enough; ctrlkit's fake-clock expiry and eviction are tested in
// its package); and ctrlkit-only API (OwnerKey, named creations, pending
// reports, extra rankers).
//
// # Benchmarks
//
// bench_test.go runs ctrlkit and upstream side by side as sub-benchmarks that
// differ only in their impl= segment (impl=ctrlkit against impl=upstream or
// impl=goroutinepercall); cmd/benchtable pairs them and prints medians and
// ratios. The scale-up comparison of whole controllers on a real apiserver is
// in the scaleup subpackage.
package parity
