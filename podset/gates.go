package podset

// Upstream's feature gates that change the ReplicaSet controller's behaviour,
// under their upstream names. The function given to WithFeatureGates is
// asked about them at every sync, so flipping one takes effect on the next.
const (
	// PodDeletionCost: a scale-down honours the
	// controller.kubernetes.io/pod-deletion-cost annotation.
	PodDeletionCost = "PodDeletionCost"
	// LogarithmicScaleDown: a scale-down compares pod ages in logarithmic
	// buckets and breaks ties by UID, spreading deletions.
	LogarithmicScaleDown = "LogarithmicScaleDown"
	// DeploymentReplicaSetTerminatingReplicas: terminating pods are counted
	// and status.terminatingReplicas is written.
	DeploymentReplicaSetTerminatingReplicas = "DeploymentReplicaSetTerminatingReplicas"
	// StaleControllerConsistencyReplicaSet: a sync waits until the informer
	// caches have seen the controller's own writes for the owner.
	StaleControllerConsistencyReplicaSet = "StaleControllerConsistencyReplicaSet"
)

// DefaultFeatureGates reports upstream v1.36.3's defaults: each of the four
// gates above is on. Other names are off.
func DefaultFeatureGates(feature string) bool {
	switch feature {
	case PodDeletionCost, LogarithmicScaleDown, DeploymentReplicaSetTerminatingReplicas, StaleControllerConsistencyReplicaSet:
		return true
	}
	return false
}
