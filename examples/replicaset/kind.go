package replicaset

import (
	"context"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/ctrlkit/ctrlkit/process"
)

// Kind is the owner kind of a controller New or NewForShare builds, spelled
// as kube-controller-manager names its controller.
type Kind string

const (
	ReplicaSets            Kind = "replicaset"
	ReplicationControllers Kind = "replicationcontroller"
)

// Valid reports whether k is ReplicaSets or ReplicationControllers.
func (k Kind) Valid() bool { return k == ReplicaSets || k == ReplicationControllers }

// QueueName is the controller's work-queue name, upstream's.
func (k Kind) QueueName() string {
	if k == ReplicationControllers {
		return "replicationmanager"
	}
	return "replicaset"
}

// EventSource is the component the controller's events name, upstream's.
func (k Kind) EventSource() string {
	if k == ReplicationControllers {
		return "replication-controller"
	}
	return "replicaset-controller"
}

// Access is every permission the controller of k uses in namespace (""
// for all), the rules the example's deploy/rbac-base.yaml and
// deploy/rbac-<kind>.yaml grant, for process.Preflight.
func (k Kind) Access(namespace string) []process.Access {
	owner := process.Access{Group: "apps", Resource: "replicasets", Namespace: namespace}
	if k == ReplicationControllers {
		owner = process.Access{Resource: "replicationcontrollers", Namespace: namespace}
	}
	status, finalizers := owner, owner
	status.Subresource, finalizers.Subresource = "status", "finalizers"
	need := process.Accesses(process.Access{Resource: "pods", Namespace: namespace}, "list", "watch", "create", "delete", "patch")
	// get: adoption re-reads the owner uncached before claiming a pod, and
	// a conflicting status update re-reads it before retrying.
	need = append(need, process.Accesses(owner, "get", "list", "watch")...)
	need = append(need, process.Accesses(status, "update")...)
	need = append(need, process.Accesses(finalizers, "update")...)
	return append(need, process.Accesses(process.Access{Resource: "events", Namespace: namespace}, "create", "patch")...)
}

// New returns NewReplicaSetController's controller, or for
// ReplicationControllers NewReplicationManager's, over f's informers.
func New(ctx context.Context, k Kind, client kubernetes.Interface, f informers.SharedInformerFactory, opts ...Option) (*Controller, error) {
	if k == ReplicationControllers {
		return NewReplicationManager(ctx, client, f.Core().V1().Pods(), f.Core().V1().ReplicationControllers(), opts...)
	}
	return NewReplicaSetController(ctx, client, f.Core().V1().Pods(), f.Apps().V1().ReplicaSets(), opts...)
}
