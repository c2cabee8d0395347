package replicaset

import (
	"time"

	"k8s.io/client-go/tools/record"
	cgworkqueue "k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/podcontrol"
	"github.com/ctrlkit/ctrlkit/podset"
)

// Defaults, as upstream's kube-controller-manager runs the two controllers.
const (
	DefaultBurstReplicas = podset.DefaultBurstReplicas
	DefaultWorkers       = podset.DefaultWorkers
	DefaultDrainTimeout  = podset.DefaultDrainTimeout
)

// Upstream's feature gate names, for WithFeatureGates. LogarithmicScaleDown
// is not among them: upstream v1.37 removed it, and scale-down is always
// logarithmic.
const (
	PodDeletionCost                         = podset.PodDeletionCost
	DeploymentReplicaSetTerminatingReplicas = podset.DeploymentReplicaSetTerminatingReplicas
	StaleControllerConsistencyReplicaSet    = podset.StaleControllerConsistencyReplicaSet
)

// ReasonSelectorInvalid is the Warning event reason for an owner whose
// selector cannot be used.
const ReasonSelectorInvalid = childset.ReasonSelectorInvalid

// Option configures a Controller; it is podset's, so every podset option
// applies. A value that can never be right panics at the With* call; nil
// hooks keep the defaults.
type Option = podset.Option

// ScaleDownDecision and ScaleDownFunc are podset's; see WithScaleDownReporter.
type (
	ScaleDownDecision = podset.ScaleDownDecision
	ScaleDownFunc     = podset.ScaleDownFunc
)

// WithBurstReplicas caps how many pods one sync may create or delete
// (default 500, at least 1).
func WithBurstReplicas(n int) Option { return podset.WithBurstReplicas(n) }

// WithWorkers sets how many owners are synced concurrently (default 5).
func WithWorkers(n int) Option { return podset.WithWorkers(n) }

// WithClock sets the clock of availability, expectations and queue delays.
func WithClock(clk clock.Clock) Option { return podset.WithClock(clk) }

// WithEventRecorder records events there instead of on an own broadcaster.
func WithEventRecorder(r record.EventRecorder) Option { return podset.WithEventRecorder(r) }

// WithMetricsProvider gives the work queue a client-go metrics provider.
func WithMetricsProvider(p cgworkqueue.MetricsProvider) Option {
	return podset.WithMetricsProvider(p)
}

// WithPodControl replaces the client-go pod control, typically with a fake.
func WithPodControl(pc podcontrol.PodControl) Option { return podset.WithPodControl(pc) }

// WithDrainTimeout bounds a graceful stop (Drain); default 30 s.
func WithDrainTimeout(d time.Duration) Option { return podset.WithDrainTimeout(d) }

// WithWriteTimeout bounds each API write of a sync; default 30 s.
func WithWriteTimeout(d time.Duration) Option { return podset.WithWriteTimeout(d) }

// WithScaleDownReporter reports every scale-down with the reason for each pod.
func WithScaleDownReporter(f ScaleDownFunc) Option { return podset.WithScaleDownReporter(f) }

// WithFeatureGates makes the controller ask enabled about upstream's gates
// (the constants above) at every sync; the defaults are upstream v1.37.2's,
// all on.
func WithFeatureGates(enabled func(feature string) bool) Option {
	return podset.WithFeatureGates(enabled)
}

// WithReadYourWrites turns the read-your-writes guard on or off (on by
// default for ReplicaSets, off for ReplicationControllers, as upstream).
func WithReadYourWrites(enabled bool) Option { return podset.WithReadYourWrites(enabled) }

// WithReadYourWritesTTL bounds how long the guard holds an owner whose
// informer never catches up (podset.WithReadYourWritesTTL).
func WithReadYourWritesTTL(d time.Duration) Option { return podset.WithReadYourWritesTTL(d) }

// WithStaleCachePoll sets how often an owner held by the guard is looked at
// again (podset.WithStaleCachePoll).
func WithStaleCachePoll(d time.Duration) Option { return podset.WithStaleCachePoll(d) }

// WithUnreachableBackoffCap caps the retry delay after the API server could
// not be reached (podset.WithUnreachableBackoffCap).
func WithUnreachableBackoffCap(d time.Duration) Option { return podset.WithUnreachableBackoffCap(d) }

// Metrics is podset's sync and scale-down metrics hook; see WithMetrics.
type Metrics = podset.Metrics

// WithMetrics records every sync and the deletion-age ratio of sorted
// scale-downs into m.
func WithMetrics(m Metrics) Option { return podset.WithMetrics(m) }
