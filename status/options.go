package status

// Option tunes CalculateReplicaSetStatus.
type Option func(*options)

type options struct {
	terminatingReplicas bool
}

// WithTerminatingReplicas makes CalculateReplicaSetStatus fill
// status.terminatingReplicas with the number of terminating pods. Upstream
// does this when the DeploymentReplicaSetTerminatingReplicas feature gate is
// on (beta and on by default since v1.35) for ReplicaSets; ctrlkit has no
// global feature gates, so the caller decides. Without it the field stays nil,
// which is what API servers that predate the field expect.
func WithTerminatingReplicas() Option {
	return func(o *options) { o.terminatingReplicas = true }
}
