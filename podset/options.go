package podset

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/tools/record"
	cgworkqueue "k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// Defaults, as kube-controller-manager runs the ReplicaSet controller.
const (
	// DefaultBurstReplicas caps the pods created or deleted in one sync.
	DefaultBurstReplicas = 500
	// DefaultWorkers is the number of owners synced at once.
	DefaultWorkers = 5
	// DefaultDrainTimeout bounds a graceful stop (Drain).
	DefaultDrainTimeout = 30 * time.Second
)

// Option configures a Controller. An option given an invalid value makes New
// fail with an error naming it.
type Option func(*config) error

type config struct {
	burst          int
	workers        int
	clock          clock.Clock
	recorder       record.EventRecorder
	metrics        cgworkqueue.MetricsProvider
	syncMetrics    Metrics
	podControl     podcontrol.PodControl
	drainTimeout   time.Duration
	onScaleDown    ScaleDownFunc
	gates          func(feature string) bool
	readYourWrites bool
	// readYourWritesTTL overrides the guard's TTL when positive.
	readYourWritesTTL     time.Duration
	staleCachePoll        time.Duration
	unreachableBackoffCap time.Duration
	queueName             string
	component             string
}

func defaultConfig() config {
	return config{
		burst:                 DefaultBurstReplicas,
		workers:               DefaultWorkers,
		clock:                 clock.RealClock{},
		drainTimeout:          DefaultDrainTimeout,
		gates:                 DefaultFeatureGates,
		readYourWrites:        true,
		staleCachePoll:        DefaultStaleCachePoll,
		unreachableBackoffCap: DefaultUnreachableBackoffCap,
	}
}

// WithBurstReplicas caps how many pods one sync may create or delete
// (default 500). It must be at least 1: a cap of zero would stall every owner.
func WithBurstReplicas(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("burst replicas must be at least 1, not %d", n)
		}
		c.burst = n
		return nil
	}
}

// WithWorkers sets how many owners are synced concurrently (default 5, at
// least 1).
func WithWorkers(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("workers must be at least 1, not %d", n)
		}
		c.workers = n
		return nil
	}
}

// WithClock sets the clock used for availability (minReadySeconds), the
// expectations TTL and the work queue's delays. Tests pass a fake clock.
func WithClock(clk clock.Clock) Option {
	return func(c *config) error {
		c.clock = clk
		return nil
	}
}

// WithEventRecorder makes the controller record events there instead of on a
// broadcaster of its own that writes to the API server.
func WithEventRecorder(r record.EventRecorder) Option {
	return func(c *config) error {
		if r == nil {
			return errors.New("nil event recorder")
		}
		c.recorder = r
		return nil
	}
}

// WithMetricsProvider gives the work queue a client-go metrics provider. It is
// used by this controller's queue only; nothing is registered globally.
func WithMetricsProvider(p cgworkqueue.MetricsProvider) Option {
	return func(c *config) error {
		if p == nil {
			return errors.New("nil metrics provider")
		}
		c.metrics = p
		return nil
	}
}

// WithPodControl replaces the client-go pod control, typically with a fake in
// tests. The read-your-writes guard then sees the replacement's pod writes
// only if it reports them through Controller.RecordPodWrite.
func WithPodControl(pc podcontrol.PodControl) Option {
	return func(c *config) error {
		if pc == nil {
			return errors.New("nil pod control")
		}
		c.podControl = pc
		return nil
	}
}

// WithDrainTimeout bounds a graceful stop (see Drain): queued owners keep
// being synced until the queue is empty or this much time has passed, after
// which in-flight syncs are cancelled (default 30 s). Zero cancels them at
// once; negative values are refused.
func WithDrainTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("drain timeout must not be negative, not %v", d)
		}
		c.drainTimeout = d
		return nil
	}
}

// WithScaleDownReporter registers a function called after every scale-down
// decision with the pods chosen and why. It runs inside a sync and must
// return quickly.
func WithScaleDownReporter(f ScaleDownFunc) Option {
	return func(c *config) error {
		if f == nil {
			return errors.New("nil scale-down reporter")
		}
		c.onScaleDown = f
		return nil
	}
}

// WithFeatureGates makes the controller ask enabled about upstream's feature
// gates (PodDeletionCost, LogarithmicScaleDown,
// DeploymentReplicaSetTerminatingReplicas,
// StaleControllerConsistencyReplicaSet) at every sync, so a flip takes effect
// on the next one. The default is DefaultFeatureGates, upstream v1.36.3's.
// A kube-controller-manager-like binary passes its gate lookup here.
func WithFeatureGates(enabled func(feature string) bool) Option {
	return func(c *config) error {
		if enabled == nil {
			return errors.New("nil feature gate function")
		}
		c.gates = enabled
		return nil
	}
}

// WithReadYourWrites turns the read-your-writes guard on (the default) or
// off. When on, and while the StaleControllerConsistencyReplicaSet gate is
// on, a sync of an owner waits until the pod and owner informers have seen
// every write the controller made for it; until then the owner is looked at
// again every WithStaleCachePoll, where upstream requeues it with backoff.
func WithReadYourWrites(enabled bool) Option {
	return func(c *config) error {
		c.readYourWrites = enabled
		return nil
	}
}

// WithReadYourWritesTTL bounds how long the read-your-writes guard holds an
// owner whose informer cache never catches up with the controller's last
// write for it (default consistency.DefaultTTL). It must be positive.
func WithReadYourWritesTTL(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("read-your-writes TTL must be positive, not %v", d)
		}
		c.readYourWritesTTL = d
		return nil
	}
}

// WithStaleCachePoll sets how often an owner held by the read-your-writes
// guard is looked at again (default 1 s). A stale cache is not a failure,
// so it neither waits on nor feeds the failure backoff. It must be positive.
func WithStaleCachePoll(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("stale-cache poll must be positive, not %v", d)
		}
		c.staleCachePoll = d
		return nil
	}
}

// WithUnreachableBackoffCap caps the retry delay of a sync that failed
// because the API server could not be reached or could not answer (default
// 30 s), so owners resume soon after the server is back instead of after
// an exponential backoff grown during the outage. It must be positive.
func WithUnreachableBackoffCap(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("unreachable backoff cap must be positive, not %v", d)
		}
		c.unreachableBackoffCap = d
		return nil
	}
}

// WithNames sets the work queue's name (for metrics) and the event source
// component. The defaults are the owner kind in lower case and
// "<kind>-controller".
func WithNames(queue, component string) Option {
	return func(c *config) error {
		if queue == "" || component == "" {
			return errors.New("empty queue or component name")
		}
		c.queueName, c.component = queue, component
		return nil
	}
}
