// Package replicaset is a reference ReplicaSet controller built only from
// ctrlkit's packages and client-go. It shows how the primitives compose
// (expectations, workqueue, podstate, podranking, slowstart, claim, status),
// and it is what ctrlkit's end-to-end tests run against a real kube-apiserver.
//
// NewReplicaSetController manages apps/v1 ReplicaSets; NewReplicationManager
// manages core/v1 ReplicationControllers with the very same core, as
// upstream's ReplicationManager wraps its ReplicaSet controller. The kinds
// differ only in a small adapter each (owner.go, kind.go): where spec and
// status live, how the selector is written (a LabelSelector, or an equality
// map for RCs), which status helper writes the status (RCs have no
// terminatingReplicas and their own condition type), and the names
// (queue "replicaset" or "replicationmanager", event component
// "replicaset-controller" or "replication-controller").
//
// Usage: build a SharedInformerFactory, call a constructor (it registers its
// event handlers and pod index), start the factory, then call Run, which
// returns once its context is done and the queue is drained.
//
// The behaviour follows upstream's pkg/controller/replicaset (v1.36): the
// expectations gate read before the pods, claim with an uncached re-read of
// the owner before adopting, burst-capped slow-start creations, parallel
// deletions of the pods podranking ranks first, the status written with a
// single retry, and a requeue at the exact moment the next pod becomes
// available under minReadySeconds.
//
// Deliberate differences from upstream:
//   - Pods come from an informer index on the controllerRef plus the
//     namespace's orphans, never from a scan of the namespace (upstream did
//     that until about v1.34); BenchmarkSteadyStateSync measures the gain.
//   - Expectations are keyed by owner UID (expectations.OwnerKey), so an
//     owner deleted and re-created under the same name never inherits its
//     predecessor's pending creations, even if the delete event was missed
//     (kubernetes#142142). The queue key stays "namespace/name".
//   - A selector that cannot be converted, or is empty, gets a Warning event
//     (reason SelectorInvalid) and no requeue; upstream only logs it.
//   - A nil spec.replicas counts as 1 everywhere; upstream dereferences it
//     in its update handler.
//   - Run drains the queue on shutdown, bounded by WithDrainTimeout, instead
//     of dropping queued work, and leaves no goroutine behind.
//   - The read-your-writes consistency store of upstream v1.36 (KEP-5647)
//     is not implemented; expectations alone guard against stale caches.
//   - A pod turning ready still schedules a check after minReadySeconds, but
//     ctrlkit's queue folds that delayed add into the immediate one the same
//     event makes (kubernetes#126027); the sync that follows schedules the
//     check at the exact availability time, so nothing is lost.
//   - WithScaleDownReporter reports every scale-down with podranking's
//     explanation of each choice.
//   - A sync sorts its candidates into active and terminating pods in one
//     pass (no copy when all are active) where upstream filters twice, and
//     computes the status from the cached owner without deep-copying it: the
//     status package never writes to its input (TestSyncLeavesTheCachedOwnerAlone).
package replicaset
