package status

// Option tunes CalculateReplicaSetStatus.
type Option func(*options)

type options struct {
	terminatingReplicas bool
	counts              *ReplicaCounts
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

// WithReplicaCounts makes CalculateReplicaSetStatus take these counts instead
// of counting activePods, for a caller that counted the pods while it
// claimed them (see ReplicaCounter). They must be the counts of activePods
// at now, with the template labels and spec.minReadySeconds of the
// ReplicaSet; activePods is then not read.
func WithReplicaCounts(c ReplicaCounts) Option {
	return func(o *options) { o.counts = &c }
}
