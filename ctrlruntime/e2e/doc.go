// Package e2e runs podsetcr's PodGroup controller in a controller-runtime
// manager against a real kube-apiserver and etcd, started by the e2e
// module's kubetest (built from Go modules, not envtest's downloads).
//
// The scenario installs the library's PodGroup CRD, runs two managers
// competing for one leader lease (only the leader may run the controller),
// scales a group
// 0 -> 200 -> 20 and checks, from a watch of the namespace replayed in
// resourceVersion order, that no PodGroup ever owned more non-terminating
// pods than its spec.replicas at that revision. It then reads the work
// queue's metrics back from the manager's /metrics endpoint over HTTP.
//
// Two more scenarios host childset through childsetcr, registered with
// controller-runtime's own builder: ctrlruntime/examples/workerset (a
// WorkerSet owning Worker custom resources, 0 -> 50 -> 5, whose restarted
// controller adopts a matching orphan Worker) and ctrlruntime/examples/gang (a Gang owning pods named
// <gang>-<i>, 0 -> 5 -> 2 -> 4). Their watch sampler also checks that no
// index is ever held by two live pods.
//
// A sharded scenario runs the WorkerSet controller in two managers of one
// shard ring (ctrlruntime/shardcr, childsetcr.WithSharding, each cache
// narrowed to its share): each owner is written by its holder alone, and
// when one manager stops mid scale-up the other takes the whole ring over
// without an owner ever holding more Workers than its spec; it runs once on
// the shared control plane (client-side filtering) and once on one of its
// own with ShardedListAndWatch on.
//
// It runs in `make e2e`. kubetest builds the control plane from the e2e
// module (../../e2e), whose go.mod pins k8s.io/kubernetes. This package is a
// module of its own, so that the ctrlruntime module users import requires
// neither the e2e module nor, through it, k8s.io/kubernetes.
package e2e
