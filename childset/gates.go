package childset

// Upstream's feature gates that change what the core does, under their
// upstream names. The function given to WithFeatureGates is asked about
// them at every sync, so flipping one takes effect on the next.
const (
	// DeploymentReplicaSetTerminatingReplicas: the children being deleted
	// are counted in Status.TerminatingReplicas.
	DeploymentReplicaSetTerminatingReplicas = "DeploymentReplicaSetTerminatingReplicas"
	// StaleControllerConsistencyReplicaSet: with WithReadYourWrites, a
	// sync waits until the caches have seen the core's own writes for the
	// owner. Asked only when a guard is given.
	StaleControllerConsistencyReplicaSet = "StaleControllerConsistencyReplicaSet"
)

// DefaultFeatureGates reports upstream v1.37.2's defaults: both gates above
// are on, other names off.
func DefaultFeatureGates(feature string) bool {
	switch feature {
	case DeploymentReplicaSetTerminatingReplicas, StaleControllerConsistencyReplicaSet:
		return true
	}
	return false
}

// guardOn reports whether this sync uses the read-your-writes guard.
func (r *Reconciler[O, C]) guardOn() bool {
	return r.cfg.guard != nil && r.cfg.gates(StaleControllerConsistencyReplicaSet)
}
