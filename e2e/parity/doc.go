// Package parity proves that ctrlkit equals upstream Kubernetes where it
// should, and measures where it is faster. Everything lives in its tests; this
// file only documents them.
//
// # Differential tests
//
// Each target feeds the same seeded random inputs to ctrlkit and to the
// code of k8s.io/kubernetes v1.37.2 that ctrlkit replaces, and fails on the
// first disagreement with a shrunk, minimal input. By default each target
// runs 100,000 cases (10,000 under -race or -short), and the costly ones
// (ranking of up to 2,000 pods, status, slow start) 3,000;
// CTRLKIT_PARITY_CASES=n or -long (1,000,000) change that, and
// CTRLKIT_PARITY_SEED or -parity.seed picks other inputs. The flags exist
// only in this package's test binary, so use the environment variables when
// testing several packages at once:
//
//	go test ./parity -long
//	CTRLKIT_PARITY_CASES=2000000 go test ./...
//
// The targets, none with a skip predicate:
//
//   - IsReady, IsAvailable: podstate against pkg/api/v1/pod, around the
//     minReadySeconds boundary to the nanosecond.
//   - DeletionCost: podranking.DeletionCost against upstream's annotation
//     parser, value and error presence (plus a fuzz target).
//   - RankingProduction, RankingAdversarial: production-like inputs (20 to
//     2,000 pods, whole-second timestamps, mostly Running and Ready, few
//     costs, rollouts where dozens of pods share a second) and adversarial
//     ones (colliding instants, UIDs and ties). Every selection API
//     (PodsToDelete, Selector.PodsToDelete, Ranking, Order, Sorted, Select)
//     must return exactly what upstream's rank, sort.Sort and slice return
//     for the same input slice, pod for pod, ranks included.
//   - RankingCornerLess: Less against upstream's on every ordered pair.
//   - RankingNoDeletionCost: the PodDeletionCost gate off.
//   - RankingSmallestCase: the smallest input on which the former
//     instant-class order chose other pods than upstream.
//   - Expectations, UIDTrackingExpectations: random operation sequences on
//     upstream's and ctrlkit's caches; after every step, for every key, the
//     whole observable state. ctrlkit evicts expired and deleted records, so
//     the sequences include InnerDelete and Expire steps that apply the same
//     eviction to the upstream side: the difference is modelled, not skipped.
//   - ClaimPods, DeleteOwnerRefPatch: the claim decisions and every patch,
//     byte for byte.
//   - RollingUpdateBounds: childset.RollingUpdate.Bounds against a
//     Deployment with the same strategy through upstream's defaulting,
//     validation, ResolveFenceposts, MaxSurge and MaxUnavailable: ints,
//     percentages (0%, 100%, above 100%, malformed), odd replicas; errors
//     by presence (plus a fuzz target).
//   - CalculateStatus, UpdateReplicaSetStatus, SlowStartBatch: upstream's
//     unexported calculateStatus, updateReplicaSetStatus (against the same
//     faulty fake clientset on both sides) and slowStartBatch, reached through
//     the linkname directive (linkname_test.go says why).
//
// Where ctrlkit deliberately differs (bugs fixed, inputs on which upstream
// panics), the difference is listed in the repository's DIFFERENCES.md with
// the test that pins it; such inputs are not generated here. Errors are
// compared by presence, since ctrlkit wraps with %w where upstream formats
// with %v.
//
// # Benchmarks
//
// bench_test.go and controller_bench_test.go run ctrlkit and upstream side by
// side as sub-benchmarks that differ only in their impl= segment, down to
// upstream's whole ReplicaSet sync; `make bench` runs them in rounds and
// prints medians and ratios with benchstat (benchstat -col /impl). The
// scale-up and heap comparisons on a real apiserver are in the scaleup
// subpackage. BENCHMARKS.md at the repository root describes each.
package parity
