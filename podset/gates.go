package podset

import "github.com/ctrlkit/ctrlkit/childset"

// Upstream's feature gates that change the ReplicaSet controller's behaviour,
// under their upstream names. The function given to WithFeatureGates is
// asked about them at every sync, so flipping one takes effect on the next;
// it is never asked about a gate the caller's Kubernetes may not register
// (see each gate).
const (
	// PodDeletionCost: a scale-down honours the
	// controller.kubernetes.io/pod-deletion-cost annotation.
	PodDeletionCost = "PodDeletionCost"
	// LogarithmicScaleDown: a scale-down compares pod ages in logarithmic
	// buckets and breaks ties by UID, spreading deletions. GA and locked on
	// since Kubernetes 1.31, removed in 1.37: the controller never asks
	// about it and always scales down logarithmically.
	//
	// Deprecated: the gate is gone upstream; nothing reads it.
	LogarithmicScaleDown = "LogarithmicScaleDown"
	// DeploymentReplicaSetTerminatingReplicas: terminating pods are counted
	// and status.terminatingReplicas is written.
	DeploymentReplicaSetTerminatingReplicas = childset.DeploymentReplicaSetTerminatingReplicas
	// StaleControllerConsistencyReplicaSet: a sync waits until the informer
	// caches have seen the controller's own writes for the owner. New in
	// Kubernetes 1.36; asked only when the informer stores report their
	// resource version (client-go v0.36 on), which a registry of the same
	// release knows.
	StaleControllerConsistencyReplicaSet = childset.StaleControllerConsistencyReplicaSet
)

// DefaultFeatureGates reports upstream v1.37.2's defaults: each gate above
// is on (LogarithmicScaleDown, gone upstream, reads as the always-on it
// became). Other names are off.
func DefaultFeatureGates(feature string) bool {
	switch feature {
	case PodDeletionCost, LogarithmicScaleDown, DeploymentReplicaSetTerminatingReplicas, StaleControllerConsistencyReplicaSet:
		return true
	}
	return false
}
