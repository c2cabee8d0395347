package podset

import (
	"context"
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
	// DefaultWriteTimeout bounds each API write of a sync.
	DefaultWriteTimeout = 30 * time.Second
)

// Option configures a Controller. A With* given a value that can never be
// right (a zero worker count, a negative duration) panics at the call, naming
// itself: it is a programmer error, caught at start-up. A nil interface or
// function value keeps the documented default. A nil Option is ignored.
type Option func(*config)

type config struct {
	burst          int
	workers        int
	clock          clock.Clock
	recorder       record.EventRecorder
	metrics        cgworkqueue.MetricsProvider
	syncMetrics    Metrics
	podControl     podcontrol.PodControl
	podWriter      podcontrol.PodWriter
	drainTimeout   time.Duration
	writeTimeout   time.Duration
	onScaleDown    ScaleDownFunc
	gates          func(feature string) bool
	readYourWrites bool
	// readYourWritesTTL overrides the guard's TTL when positive.
	readYourWritesTTL     time.Duration
	staleCachePoll        time.Duration
	unreachableBackoffCap time.Duration
	queueName             string
	component             string
	syncGuard             SyncGuard
	// driverOptions names the options given that only New's driver
	// applies; NewReconciler refuses them unless driven is set.
	driverOptions []string
	driven        bool
}

// driverOption records that the option called name, which only New's
// driver applies, was given.
func (c *config) driverOption(name string) { c.driverOptions = append(c.driverOptions, name) }

// newConfig applies opts over the defaults.
func newConfig(opts []Option) config {
	cfg := config{
		burst:                 DefaultBurstReplicas,
		workers:               DefaultWorkers,
		clock:                 clock.RealClock{},
		drainTimeout:          DefaultDrainTimeout,
		writeTimeout:          DefaultWriteTimeout,
		gates:                 DefaultFeatureGates,
		readYourWrites:        true,
		staleCachePoll:        DefaultStaleCachePoll,
		unreachableBackoffCap: DefaultUnreachableBackoffCap,
	}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return cfg
}

// WithBurstReplicas caps how many pods one sync may create or delete
// (default 500). It panics if n is below 1: a cap of zero would stall every
// owner.
func WithBurstReplicas(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("podset: WithBurstReplicas: the burst must be at least 1, not %d", n))
	}
	return func(c *config) { c.burst = n }
}

// WithWorkers sets how many owners are synced concurrently (default 5). It
// panics if n is below 1.
func WithWorkers(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("podset: WithWorkers: there must be at least 1 worker, not %d", n))
	}
	return func(c *config) { c.workers = n }
}

// WithClock sets the clock used for availability (minReadySeconds), the
// expectations TTL and the work queue's delays; write deadlines are in real
// time, as the API client's are. Tests pass a fake clock. nil means the
// default, clock.RealClock{}.
func WithClock(clk clock.Clock) Option {
	return func(c *config) {
		if clk == nil {
			clk = clock.RealClock{}
		}
		c.clock = clk
	}
}

// WithEventRecorder makes the controller record events there instead of on a
// broadcaster of its own that writes to the API server. nil means the
// default, that broadcaster.
func WithEventRecorder(r record.EventRecorder) Option {
	return func(c *config) { c.recorder = r }
}

// WithMetricsProvider gives the work queue a client-go metrics provider. It is
// used by this controller's queue only; nothing is registered globally. nil
// means the default, no queue metrics.
func WithMetricsProvider(p cgworkqueue.MetricsProvider) Option {
	return func(c *config) { c.metrics = p; c.driverOption("WithMetricsProvider") }
}

// WithPodWriter sets the one writer every pod write goes through (create,
// delete, and the adoption and release patches): a controller-runtime
// client's (ctrlruntime/crclient.NewWriter), or another client's. The
// controller wraps it with upstream's events and checks, the deadline and
// the read-your-writes recording. nil means the default,
// podcontrol.ClientsetWriter over New's client.
func WithPodWriter(w podcontrol.PodWriter) Option {
	return func(c *config) { c.podWriter = w }
}

// WithPodControl replaces the whole pod control, typically with a fake in
// tests; it wins over WithPodWriter. Its writes do not reach the
// read-your-writes guard, which learns of pod writes from the writer: give
// a writer (WithPodWriter) to write through another client. nil means the
// default, a pod control over the pod writer.
func WithPodControl(pc podcontrol.PodControl) Option {
	return func(c *config) { c.podControl = pc }
}

// WithDrainTimeout bounds a graceful stop (see Drain): queued owners keep
// being synced until the queue is empty or this much time has passed, after
// which in-flight syncs are cancelled (default 30 s). Zero cancels them at
// once; a negative d panics.
func WithDrainTimeout(d time.Duration) Option {
	if d < 0 {
		panic(fmt.Sprintf("podset: WithDrainTimeout: the timeout must not be negative, not %v", d))
	}
	return func(c *config) { c.drainTimeout = d; c.driverOption("WithDrainTimeout") }
}

// WithWriteTimeout bounds every API write a sync makes: each pod creation,
// deletion, adoption or release patch and status update gets a context
// deadline this far ahead (default 30 s). The deletions of one scale-down,
// which all start together, share one deadline this far from that start. A
// sync stops waiting for a write at its deadline even if the pod control or
// Kind ignores the context; see Sync. It panics if d is not positive.
func WithWriteTimeout(d time.Duration) Option {
	mustBePositive("WithWriteTimeout", d)
	return func(c *config) { c.writeTimeout = d }
}

// WithScaleDownReporter registers a function called after every scale-down
// decision with the pods chosen and why. It runs inside a sync and must
// return quickly. nil means the default, no reporter.
func WithScaleDownReporter(f ScaleDownFunc) Option {
	return func(c *config) { c.onScaleDown = f }
}

// WithFeatureGates makes the controller ask enabled about upstream's feature
// gates (PodDeletionCost, DeploymentReplicaSetTerminatingReplicas, and
// StaleControllerConsistencyReplicaSet while the read-your-writes guard has
// stores, see gates.go) at every sync, so a flip takes effect on the next
// one. A kube-controller-manager-like binary passes its gate lookup here,
// from Kubernetes 1.34 to 1.37: it is never asked about LogarithmicScaleDown
// (removed in 1.37, always on) nor about a gate its release does not
// register. nil means the default, DefaultFeatureGates (upstream v1.37.2's).
func WithFeatureGates(enabled func(feature string) bool) Option {
	return func(c *config) {
		if enabled == nil {
			enabled = DefaultFeatureGates
		}
		c.gates = enabled
	}
}

// WithReadYourWrites turns the read-your-writes guard on (the default) or
// off. When on, and while the StaleControllerConsistencyReplicaSet gate is
// on, a sync of an owner waits until the pod and owner informers have seen
// every write the controller made for it; until then the owner is looked at
// again every WithStaleCachePoll, where upstream requeues it with backoff.
func WithReadYourWrites(enabled bool) Option {
	return func(c *config) { c.readYourWrites = enabled }
}

// WithReadYourWritesTTL bounds how long the read-your-writes guard holds an
// owner whose informer cache never catches up with the controller's last
// write for it (default consistency.DefaultTTL). It panics if d is not
// positive.
func WithReadYourWritesTTL(d time.Duration) Option {
	mustBePositive("WithReadYourWritesTTL", d)
	return func(c *config) { c.readYourWritesTTL = d }
}

// WithStaleCachePoll sets how often an owner held by the read-your-writes
// guard is looked at again (default 1 s). A stale cache is not a failure,
// so it neither waits on nor feeds the failure backoff. It panics if d is
// not positive.
func WithStaleCachePoll(d time.Duration) Option {
	mustBePositive("WithStaleCachePoll", d)
	return func(c *config) { c.staleCachePoll = d }
}

// WithUnreachableBackoffCap caps the retry delay of a sync that failed
// because the API server could not be reached or could not answer (default
// 30 s), so owners resume soon after the server is back instead of after
// an exponential backoff grown during the outage. It panics if d is not
// positive.
func WithUnreachableBackoffCap(d time.Duration) Option {
	mustBePositive("WithUnreachableBackoffCap", d)
	return func(c *config) { c.unreachableBackoffCap = d; c.driverOption("WithUnreachableBackoffCap") }
}

// WithNames sets the work queue's name (for metrics) and the event source
// component. The defaults are the owner kind in lower case and
// "<kind>-controller". It panics if either is empty.
func WithNames(queue, component string) Option {
	if queue == "" || component == "" {
		panic(fmt.Sprintf("podset: WithNames: empty queue (%q) or component (%q) name", queue, component))
	}
	return func(c *config) { c.queueName, c.component = queue, component; c.driverOption("WithNames") }
}

// SyncGuard fences one sync of the owner with the "namespace/name" key: it
// returns the context the sync's reads and writes run under and a function
// to call when the sync is over, and ok false when this replica must not
// touch the owner now (done is then never called). A refusal with
// retryAfter > 0 says the owner is this replica's to sync once it may
// again (its share is being taken up, or its Lease renewed): the owner is
// looked at again after that delay, so no event is lost to the refusal.
// With retryAfter 0 another replica syncs it. shard.Member's Guard and
// Wants over the owner's hash make one.
type SyncGuard func(ctx context.Context, key string) (guarded context.Context, done func(), retryAfter time.Duration, ok bool)

// WithSyncGuard runs every sync under g, for a controller sharded over
// replicas: a sync of an owner outside this replica's share is skipped
// (no write; requeued only when g asks for it), and a sync whose guarded
// context ends (the share moved on) stops writing at once and fails, to be
// looked at again. nil means no guard.
func WithSyncGuard(g SyncGuard) Option {
	return func(c *config) { c.syncGuard = g }
}

// mustBePositive panics, as the With* option named opt must, if d is not a
// positive duration.
func mustBePositive(opt string, d time.Duration) {
	if d <= 0 {
		panic(fmt.Sprintf("podset: %s: the duration must be positive, not %v", opt, d))
	}
}
