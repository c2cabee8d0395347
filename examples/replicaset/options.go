package replicaset

import (
	"time"

	"k8s.io/client-go/tools/record"
	cgworkqueue "k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// Defaults, as upstream's kube-controller-manager runs the two controllers.
const (
	// DefaultBurstReplicas caps the pods created or deleted in one sync.
	DefaultBurstReplicas = 500
	// DefaultWorkers is the number of syncs that run at once.
	DefaultWorkers = 5
	// DefaultDrainTimeout bounds how long Run keeps syncing queued owners
	// after its context is done.
	DefaultDrainTimeout = 30 * time.Second
)

// Option configures a Controller.
type Option func(*config)

type config struct {
	burst        int
	workers      int
	clock        clock.Clock
	recorder     record.EventRecorder
	metrics      cgworkqueue.MetricsProvider
	podControl   podcontrol.PodControl
	drainTimeout time.Duration
	onScaleDown  ScaleDownFunc
}

func defaultConfig() config {
	return config{
		burst:        DefaultBurstReplicas,
		workers:      DefaultWorkers,
		clock:        clock.RealClock{},
		drainTimeout: DefaultDrainTimeout,
	}
}

// WithBurstReplicas caps how many pods one sync may create or delete
// (default 500). Values below 1 are ignored: a cap of zero would stall the
// controller for good.
func WithBurstReplicas(n int) Option {
	return func(c *config) {
		if n >= 1 {
			c.burst = n
		}
	}
}

// WithWorkers sets how many owners are synced concurrently (default 5).
// Values below 1 are ignored.
func WithWorkers(n int) Option {
	return func(c *config) {
		if n >= 1 {
			c.workers = n
		}
	}
}

// WithClock sets the clock used for availability (minReadySeconds), the
// expectations TTL and the workqueue's delays. Tests pass a fake clock. A nil
// clock is ignored.
func WithClock(clk clock.Clock) Option {
	return func(c *config) {
		if clk != nil {
			c.clock = clk
		}
	}
}

// WithEventRecorder makes the controller record events there instead of on
// a broadcaster of its own that writes to the API server. A nil recorder is
// ignored.
func WithEventRecorder(r record.EventRecorder) Option {
	return func(c *config) {
		if r != nil {
			c.recorder = r
		}
	}
}

// WithMetricsProvider gives the work queue a client-go metrics provider, so
// existing Prometheus adapters plug in. The provider is used by this
// controller's queue only; nothing is registered globally.
func WithMetricsProvider(p cgworkqueue.MetricsProvider) Option {
	return func(c *config) {
		if p != nil {
			c.metrics = p
		}
	}
}

// WithPodControl replaces the client-go pod control, typically with a fake in
// tests. A nil value is ignored.
func WithPodControl(pc podcontrol.PodControl) Option {
	return func(c *config) {
		if pc != nil {
			c.podControl = pc
		}
	}
}

// WithDrainTimeout bounds the drain Run performs after its context is done:
// queued owners keep being synced until the queue is empty or this much time
// has passed, after which in-flight API calls are cancelled (default 30 s).
// Zero cancels them at once; negative values are ignored.
func WithDrainTimeout(d time.Duration) Option {
	return func(c *config) {
		if d >= 0 {
			c.drainTimeout = d
		}
	}
}

// WithScaleDownReporter registers a function called after every scale-down
// decision with the pods chosen and why. The example binary prints it; it must
// return quickly since it runs inside a sync. A nil function is ignored.
func WithScaleDownReporter(f ScaleDownFunc) Option {
	return func(c *config) {
		if f != nil {
			c.onScaleDown = f
		}
	}
}
