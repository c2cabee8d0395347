// Package scaleup benchmarks whole ReplicaSet controllers on a real
// kube-apiserver: ctrlkit's against upstream's
// replicaset.NewReplicaSetController, with the same client QPS and burst,
// burst replicas and workers, and the read-your-writes guard on for both or
// off for both.
//
// BenchmarkScaleUp creates ReplicaSets from zero (one of 1,000 pods, and 500
// of 10) and reports the time until every pod exists and until every status
// counts them, the pod creates (exactly the target, or the benchmark fails),
// every write, and the test process's CPU time and allocated bytes per 1,000
// pods. BenchmarkSteadyHeap measures each controller's live heap over 30,000
// pods in a child process, with kube-controller-manager's informer setup
// (managedFields dropped), and with podset.TrimPod, the informer transform
// that keeps only the pod fields the controllers read. BENCHMARKS.md at the
// repository root describes both and how to run rounds.
//
// The control plane (kubetest: etcd and kube-apiserver built from Go
// modules) is started only when a benchmark runs, so `go test` without -bench
// costs nothing here.
package scaleup
