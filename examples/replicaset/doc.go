// Package replicaset holds ctrlkit's ReplicaSet and ReplicationController
// controllers: two adapters (ReplicaSetKind, ReplicationControllerKind) for
// package podset, which holds the whole controller loop, and the example
// binary in cmd/. It is what ctrlkit's end-to-end tests run against a real
// kube-apiserver.
//
// NewReplicaSetController manages apps/v1 ReplicaSets; NewReplicationManager
// manages core/v1 ReplicationControllers with the very same core, as
// upstream's ReplicationManager wraps its ReplicaSet controller. The kinds
// differ only in their adapter: where spec and status live, how the selector
// is written (a LabelSelector, or an equality map for RCs), which status
// helper writes the status (RCs have no terminatingReplicas), and the names
// (queue "replicaset" or "replicationmanager", event component
// "replicaset-controller" or "replication-controller"). As upstream, the
// ReplicationManager runs without the read-your-writes guard.
//
// Usage: build a SharedInformerFactory, call a constructor (it registers its
// event handlers and indexes), start the factory, then call Run. Cancelling
// Run's context stops at once; Drain stops after syncing what is queued (see
// podset.Controller.Run). Every podset option applies, including
// podset.WithFeatureGates with upstream's gate names.
//
// A Kind names either kind for a binary: New builds its controller over an
// informer factory, Access lists the permissions it uses, and NewForShare
// builds it over one share of a shard ring, for a shard.Runner.
package replicaset
