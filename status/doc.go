// Package status counts a workload's replicas and keeps the status of
// ReplicaSets and ReplicationControllers: the replica counts, the
// ReplicaFailure condition, and the write to the status subresource with a
// single retry.
//
// It replaces calculateStatus, updateReplicaSetStatus and the condition
// helpers of k8s.io/kubernetes/pkg/controller/replicaset, with the behaviour
// of v1.36.3. A sync loop calls CalculateReplicaSetStatus with the pods it
// claimed and the error of its manageReplicas, then UpdateReplicaSetStatus,
// and requeues on error. ReplicationControllers get the same rules from the
// ...ReplicationController... functions (issue 11); both kinds run through
// one generic core, parameterised by a small adapter per kind, where upstream
// converts ReplicationControllers to ReplicaSets and back. CountReplicas is
// the part any workload controller can reuse.
//
// Differences from upstream, each pinned by a test:
//   - No logger argument and no global feature gates: the logger comes from
//     the context, and terminatingReplicas is filled only with
//     WithTerminatingReplicas() (upstream: gate DeploymentReplicaSetTerminatingReplicas
//     plus a per-controller flag).
//   - A new ReplicaFailure condition takes its transition time from the now
//     argument, not the wall clock, so a status is a pure function of its inputs.
//   - UpdateReplicaSetStatus never writes into the object passed in (upstream
//     sets rs.Status on it, which corrupts an informer cache if the caller did
//     not copy); it updates a copy, and the retry copies the re-read object too.
//   - Bad input never panics (issue 7): a nil spec.replicas counts as the API
//     default of 1; a nil ReplicaSet or ReplicationController gives the zero
//     status from the Calculate functions and an error wrapping ErrNilObject
//     from the Update functions; a nil client or context gives ErrNilClient or
//     ErrNilContext; a nil status pointer makes SetCondition and
//     RemoveCondition return ErrNilStatus (they return an error where upstream
//     returns nothing, so upstream call sites compile unchanged); nil pods in
//     the lists are skipped; a client answering with neither object nor error
//     gives ErrNilObject.
//   - The update honours its context: a cancelled context stops it before the
//     next call (upstream uses context.TODO()). Errors are wrapped with %w, so
//     apierrors.IsConflict still recognises a conflict.
//   - Template labels are matched with a direct check instead of building
//     a selector per status, with identical results (fuzzed against the
//     apimachinery selector); they are flattened once per CountReplicas call,
//     so each pod costs one map lookup per template label and its conditions
//     are scanned once when it is available.
package status
