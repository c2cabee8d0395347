// Package scenarios holds the end-to-end tests of ctrlkit's example
// controller (examples/replicaset) against a real kube-apiserver and etcd
// started by e2e/kubetest.
//
// One control plane is shared by every test of the package (see TestMain)
// because starting it costs seconds while a scenario's namespace costs
// milliseconds; each scenario therefore works in its own namespace, runs its
// own controller with namespace-scoped informers and its own HTTP transport,
// and checks with goleak that everything it started has stopped.
//
// No scheduler or kubelet runs, so the tests bind pods and write their status
// themselves where a scenario needs running or ready pods, and no garbage
// collector runs, so pods of a deleted ReplicaSet stay behind.
package scenarios
