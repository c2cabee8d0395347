// Package scaleup benchmarks whole ReplicaSet controllers on a real
// kube-apiserver: ctrlkit's example controller against upstream's
// replicaset.NewReplicaSetController, each scaling a fresh ReplicaSet from 0
// to 1,000 pods with the same client QPS and burst, the same burst replicas
// and the same number of workers.
//
// ns/op is the time from creating the ReplicaSet until all its pods exist
// (seen by an independent watch). The controller's client goes through a
// counting transport, so each run also reports creates/op (successful pod
// creations, which must be exactly 1,000) and writes/op (every POST, PUT,
// PATCH and DELETE the controller sent, events and status updates included).
//
// The control plane (kubetest: etcd and kube-apiserver built from Go
// modules) is started only when a benchmark runs, so `go test` without -bench
// costs nothing here.
package scaleup
