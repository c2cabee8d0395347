// Package podstate holds the small pod predicates every workload controller
// needs: active, terminating, ready, ready time, available, restart counts and
// keys, plus the pod-condition, container-status and phase helpers of
// pkg/api/v1/pod under their upstream names (GetPodCondition,
// UpdatePodCondition, IsPodReadyConditionTrue, GetExistingContainerStatus,
// IsPodPhaseTerminal) and pkg/util/node's NodeUnreachablePodReason.
// It replaces the helpers that controllers copy out of
// k8s.io/kubernetes/pkg/controller and k8s.io/kubernetes/pkg/api/v1/pod, with
// the semantics of Kubernetes v1.37.
//
// How it differs from upstream:
//   - A nil *v1.Pod never panics: every predicate answers false (or the zero
//     value), and the filters drop nil entries.
//   - IsAvailable uses the newest boundary, ready-since + minReadySeconds <=
//     now (upstream PR #132122); a zero transition time with minReadySeconds > 0
//     is not available, exactly as upstream.
//   - MaxContainerRestarts returns int32 counts and matches sidecars
//     (restartable init containers) without building a set, so it does not
//     allocate.
//   - Key needs no fmt and no logger.
package podstate
