// Package binary runs the example controller as an operator does: the
// replicaset-controller command, built once with `go build`, started as a
// child process with --kubeconfig against kubetest's real kube-apiserver and
// etcd, under the ServiceAccount and RBAC rules of examples/replicaset/deploy.
//
// The control plane runs RBAC authorization with the
// OwnerReferencesPermissionEnforcement admission plugin, so a verb the
// controller needs and deploy/rbac-*.yaml lacks fails a scenario. Each process
// talks to the apiserver through its own loopback reverse proxy, which records
// every write with a timestamp (to show that only the leader writes, and when
// a deposed leader stopped) and can fail Lease updates on command.
//
// Scenarios cover the health endpoints, scale-ups of ReplicaSets and
// ReplicationControllers, leader election between two processes (kill -9,
// SIGTERM, a lost lease), a ring of three --shard-ring processes sharing the
// owners (a join mid scale-up, kill -9; ShardedListAndWatch off and on),
// signal handling, exit codes, bad configuration, /metrics kept off the
// health port, and the namespaced RBAC variant.
// Every child process runs in its own process group, is bounded by a timeout
// and is killed when its test ends. Run with
//
//	cd e2e && go test -count=1 -timeout 30m ./binary/...
package binary
