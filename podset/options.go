package podset

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	cgworkqueue "k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/internal/syncloop"
	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// Defaults, as kube-controller-manager runs the ReplicaSet controller.
const (
	// DefaultBurstReplicas caps the pods created or deleted in one sync.
	DefaultBurstReplicas = 500
	// DefaultWorkers is the number of owners synced at once.
	DefaultWorkers = syncloop.DefaultWorkers
	// DefaultDrainTimeout bounds a graceful stop (Drain).
	DefaultDrainTimeout = syncloop.DefaultDrainTimeout
	// DefaultWriteTimeout bounds each API write of a sync.
	DefaultWriteTimeout = 30 * time.Second
)

// Option configures New and NewReconciler. A With* given a value that can
// never be right (a zero worker count, a negative duration, an empty name)
// panics at the call, naming itself: a programmer error, caught at
// start-up. A nil Option is ignored. A nil argument keeps the option's
// default, except for two, which mean the same in childset: a nil
// recorder records no events (WithEventRecorder) and a nil guard turns the
// read-your-writes guard off (WithReadYourWrites).
type Option func(*config)

type config struct {
	syncloop.Options // the clock and the driver's options, shared with childset
	burst            int
	recorder         record.EventRecorder
	recorderSet      bool // WithEventRecorder was given, maybe with nil
	syncMetrics      Metrics
	podControl       podcontrol.PodControl
	podWriter        podcontrol.PodWriter
	writeTimeout     time.Duration
	onScaleDown      ScaleDownFunc
	gates            func(feature string) bool
	guard            *consistency.Guard
	guardSet         bool // WithReadYourWrites was given, maybe with nil
	// readYourWritesTTL overrides the TTL of the guard podset builds when
	// positive.
	readYourWritesTTL time.Duration
	eventSource       string
	syncGuard         childset.SyncGuard
}

// ownGuard reports whether podset builds its read-your-writes guard
// itself, the default.
func (c *config) ownGuard() bool { return !c.guardSet }

// newConfig applies opts over the defaults.
func newConfig(opts []Option) config {
	cfg := config{
		Options:      syncloop.DefaultOptions(),
		burst:        DefaultBurstReplicas,
		writeTimeout: DefaultWriteTimeout,
		gates:        DefaultFeatureGates,
	}
	syncloop.Apply(&cfg, opts)
	return cfg
}

// WithBurstReplicas caps the pods one sync creates or deletes (default
// DefaultBurstReplicas). n < 1 panics: a cap of zero would stall every
// owner.
func WithBurstReplicas(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("podset: WithBurstReplicas: the burst must be at least 1, not %d", n))
	}
	return func(c *config) { c.burst = n }
}

// WithWorkers sets how many owners are synced at once (default
// DefaultWorkers); a host reads it from Reconciler.Workers. n < 1 panics.
func WithWorkers(n int) Option { return shared(syncloop.Workers("podset", n)) }

// WithClock sets the clock of availability (minReadySeconds), the
// expectations and the work queue's delays; write deadlines are in real
// time, as the API client's are. nil means clock.RealClock{}.
func WithClock(clk clock.Clock) Option { return shared(syncloop.Clock(clk)) }

// WithEventRecorder sets where the controller records its events
// (upstream's, on pods and owners). nil records none. Without the option,
// New records them on a broadcaster of its own that writes through its
// client (WithEventSource names it), and NewReconciler panics, having no
// client.
func WithEventRecorder(r record.EventRecorder) Option {
	return func(c *config) {
		if r == nil {
			r = noEvents{}
		}
		c.recorder, c.recorderSet = r, true
	}
}

// WithEventSource names the component of the events New's own broadcaster
// records (default "<kind>-controller", the owner kind in lower case); a
// recorder given by WithEventRecorder carries its own. It is an option of
// New's driver: NewReconciler refuses it. An empty component panics.
func WithEventSource(component string) Option {
	if component == "" {
		panic("podset: WithEventSource: empty component")
	}
	only := syncloop.DriverOnly("WithEventSource")
	return func(c *config) { c.eventSource = component; only(&c.Options) }
}

// WithMetricsProvider publishes the work queue's metrics there; nothing is
// registered globally. nil means none (the default). It is an option of
// New's driver: NewReconciler refuses it.
func WithMetricsProvider(p cgworkqueue.MetricsProvider) Option { return shared(syncloop.Metrics(p)) }

// WithQueueName names the work queue, for its metrics (default the owner
// kind in lower case). It is an option of New's driver: NewReconciler
// refuses it. An empty name panics.
func WithQueueName(name string) Option { return shared(syncloop.QueueName("podset", name)) }

// WithMetrics records syncs and scale-down choices into m. The core
// reports them itself, so New's driver and any other host (podsetcr) give
// the same measurements. nil means the default, no metrics.
func WithMetrics(m Metrics) Option {
	return func(c *config) { c.syncMetrics = m }
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

// WithDrainTimeout bounds a graceful stop (Drain): queued owners are still
// synced for this long, then in-flight syncs are cancelled (default
// DefaultDrainTimeout). Zero cancels them at once; a negative d panics. It
// is an option of New's driver: NewReconciler refuses it.
func WithDrainTimeout(d time.Duration) Option { return shared(syncloop.DrainTimeout("podset", d)) }

// WithWriteTimeout bounds every API write of a sync: each pod creation,
// deletion, adoption or release patch and status update gets a deadline
// this far ahead (default DefaultWriteTimeout); the deletions of one
// scale-down, which start together, share one. A sync stops waiting for a
// write at its deadline even if the pod control or Kind ignores the
// context; see Sync. d <= 0 panics.
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

// WithReadYourWrites sets the read-your-writes guard: while the
// StaleControllerConsistencyReplicaSet gate is on, a sync of an owner
// waits until the informers have seen every write the controller made for
// it (its pods under schema.GroupResource{Resource: "pods"}, its status
// under the owner's resource, as guard's stores register them); until then
// the owner is looked at again every WithStaleCachePoll, where upstream
// requeues it with backoff. nil turns the guard off. Without the option
// podset builds the guard itself over the pod and owner informers' stores
// (WithReadYourWritesTTL), as upstream's ReplicaSet controller: its
// children are pods, whose store it has, where childset knows neither.
func WithReadYourWrites(guard *consistency.Guard) Option {
	return func(c *config) { c.guard, c.guardSet = guard, true }
}

// WithReadYourWritesTTL bounds how long the guard podset builds holds an
// owner whose informer cache never catches up with the controller's last
// write for it (default consistency.DefaultTTL). With WithReadYourWrites
// there is no such guard, and NewReconciler refuses it: give the TTL to
// consistency.NewGuard. d <= 0 panics.
func WithReadYourWritesTTL(d time.Duration) Option {
	mustBePositive("WithReadYourWritesTTL", d)
	return func(c *config) { c.readYourWritesTTL = d }
}

// WithStaleCachePoll sets how soon an owner held by the read-your-writes
// guard is looked at again (default DefaultStaleCachePoll); a host reads
// it from Reconciler.StaleCachePoll. A stale cache is not a failure, so it
// neither waits on nor feeds the failure backoff. d <= 0 panics.
func WithStaleCachePoll(d time.Duration) Option { return shared(syncloop.StaleCachePoll("podset", d)) }

// WithUnreachableBackoffCap caps the retry delay of a sync that failed
// because the API server could not be reached or could not answer
// (default DefaultUnreachableBackoffCap), so owners resume soon after an
// outage. It is an option of New's driver: NewReconciler refuses it.
// d <= 0 panics.
func WithUnreachableBackoffCap(d time.Duration) Option {
	return shared(syncloop.UnreachableBackoffCap("podset", d))
}

// WithSyncGuard runs every sync under g, for a controller sharded over
// replicas (see childset.SyncGuard). nil means no guard.
func WithSyncGuard(g childset.SyncGuard) Option {
	return func(c *config) { c.syncGuard = g }
}

// shared makes an Option of set, one of the options shared with
// childset define (internal/syncloop).
func shared(set syncloop.Set) Option { return func(c *config) { set(&c.Options) } }

// mustBePositive panics, as the With* option named opt must, if d is not a
// positive duration.
func mustBePositive(opt string, d time.Duration) { syncloop.MustBePositive("podset", opt, d) }

// noEvents is the recorder of WithEventRecorder(nil): it records nothing.
type noEvents struct{}

func (noEvents) Event(runtime.Object, string, string, string)          {}
func (noEvents) Eventf(runtime.Object, string, string, string, ...any) {}
func (noEvents) AnnotatedEventf(runtime.Object, map[string]string, string, string, string, ...any) {
}
