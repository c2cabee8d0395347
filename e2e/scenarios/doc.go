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
// Every scenario also checks the over-creation invariant: a sampler watches
// the namespace's pods and owners and fails the test if any ReplicaSet or
// ReplicationController ever owns more non-terminating pods than the
// spec.replicas in force at that revision. A scenario that expects an excess
// (an adopted orphan, creates whose outcome the controller could not know)
// documents it and bounds it.
//
// The fault scenarios (TestFault...) each start their own control plane,
// authorizing with RBAC and OwnerReferencesPermissionEnforcement, apply the
// example's deploy/rbac-*.yaml from the files, and run the controller as its
// service account by impersonation, so a permission missing from the
// manifest fails them. They restart the apiserver mid scale-up, force a
// relist by cutting the controller's watches and compacting etcd, answer
// creates that succeeded with a timeout, and fail the leader's Lease
// renewals between two leader-elected replicas.
//
// No scheduler or kubelet runs, so the tests bind pods and write their status
// themselves where a scenario needs running or ready pods, and no garbage
// collector runs, so pods of a deleted ReplicaSet stay behind.
package scenarios
