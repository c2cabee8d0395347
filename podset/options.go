package podset

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	cgworkqueue "k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// Defaults, as kube-controller-manager runs the ReplicaSet controller;
// they are the set core's (childset).
const (
	DefaultBurstReplicas         = childset.DefaultBurstReplicas
	DefaultWorkers               = childset.DefaultWorkers
	DefaultDrainTimeout          = childset.DefaultDrainTimeout
	DefaultWriteTimeout          = childset.DefaultWriteTimeout
	DefaultStaleCachePoll        = childset.DefaultStaleCachePoll
	DefaultUnreachableBackoffCap = childset.DefaultUnreachableBackoffCap
)

// Option configures New and NewReconciler. The options podset shares with
// the set core are childset's, with the same names, defaults and panics
// (a value that can never be right panics at the call, naming itself);
// the others are about pods. A nil Option is ignored. A nil argument keeps
// the option's default, except for two, which mean the same in childset:
// a nil recorder records no events (WithEventRecorder) and a nil guard
// turns the read-your-writes guard off (WithReadYourWrites). Where podset
// differs is in what it does without them: it records events on a
// broadcaster of its own, and builds its guard over the informers' stores.
type Option func(*config)

type config struct {
	// core are the set core's options, handed to childset as given.
	core []childset.Option
	// driverOnly names the options only New's driver honours, given.
	driverOnly []string

	// What the pod parts read of the shared options.
	clock        clock.Clock
	gates        func(feature string) bool
	writeTimeout time.Duration
	recorder     record.EventRecorder
	recorderSet  bool // WithEventRecorder was given, maybe with nil
	syncMetrics  Metrics

	podControl  podcontrol.PodControl
	podWriter   podcontrol.PodWriter
	onScaleDown ScaleDownFunc
	guard       *consistency.Guard
	guardSet    bool // WithReadYourWrites was given, maybe with nil
	// readYourWritesTTL overrides the TTL of the guard podset builds when
	// positive.
	readYourWritesTTL time.Duration
	eventSource       string
}

// newConfig applies opts over the defaults.
func newConfig(opts []Option) config {
	cfg := config{clock: clock.RealClock{}, gates: DefaultFeatureGates, writeTimeout: DefaultWriteTimeout}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return cfg
}

// refuseDriverOnly panics, for NewReconciler, on options that configure
// New's queue and workers: a host has its own, and ignoring them would
// leave the caller believing they apply.
func (c *config) refuseDriverOnly() {
	if len(c.driverOnly) > 0 {
		panic(fmt.Sprintf("podset: NewReconciler: %s configure New's driver, not the core; set the host's own equivalents",
			strings.Join(c.driverOnly, ", ")))
	}
}

// core makes an Option of one of the set core's.
func core(o childset.Option) Option { return func(c *config) { c.core = append(c.core, o) } }

// driver makes an Option of one of the set core's that only New's driver
// honours.
func driver(name string, o childset.Option) Option {
	return func(c *config) { c.core = append(c.core, o); c.driverOnly = append(c.driverOnly, name) }
}

// The options shared with the set core; see childset's of the same name.

// WithBurstReplicas caps the pods one sync creates or deletes.
func WithBurstReplicas(n int) Option { return core(childset.WithBurstReplicas(n)) }

// WithWorkers sets how many owners are synced at once.
func WithWorkers(n int) Option { return core(childset.WithWorkers(n)) }

// WithStaleCachePoll sets how soon an owner held by the read-your-writes
// guard is looked at again.
func WithStaleCachePoll(d time.Duration) Option { return core(childset.WithStaleCachePoll(d)) }

// WithSyncGuard runs every sync under g, for a controller sharded over
// replicas.
func WithSyncGuard(g childset.SyncGuard) Option { return core(childset.WithSyncGuard(g)) }

// WithDrainTimeout bounds a graceful stop (Drain); New's driver only.
func WithDrainTimeout(d time.Duration) Option {
	return driver("WithDrainTimeout", childset.WithDrainTimeout(d))
}

// WithUnreachableBackoffCap caps the retry delay of a sync that failed
// because the API server could not be reached; New's driver only.
func WithUnreachableBackoffCap(d time.Duration) Option {
	return driver("WithUnreachableBackoffCap", childset.WithUnreachableBackoffCap(d))
}

// WithQueueName names the work queue, for its metrics (default the owner
// kind in lower case); New's driver only.
func WithQueueName(name string) Option { return driver("WithQueueName", childset.WithQueueName(name)) }

// WithMetricsProvider publishes the work queue's metrics there; New's
// driver only.
func WithMetricsProvider(p cgworkqueue.MetricsProvider) Option {
	return driver("WithMetricsProvider", childset.WithMetricsProvider(p))
}

// WithClock sets the clock of availability (minReadySeconds), the
// expectations, the ranking's pod ages and the work queue's delays; nil
// means clock.RealClock{}.
func WithClock(clk clock.Clock) Option {
	set := core(childset.WithClock(clk))
	if clk == nil {
		clk = clock.RealClock{}
	}
	return func(c *config) { c.clock = clk; set(c) }
}

// WithWriteTimeout bounds every API write of a sync (default
// DefaultWriteTimeout): each pod creation, deletion, adoption or release
// patch and the status update. d <= 0 panics.
func WithWriteTimeout(d time.Duration) Option {
	set := core(childset.WithWriteTimeout(d))
	return func(c *config) { c.writeTimeout = d; set(c) }
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
	if enabled == nil {
		enabled = DefaultFeatureGates
	}
	set := core(childset.WithFeatureGates(enabled))
	return func(c *config) { c.gates = enabled; set(c) }
}

// WithEventRecorder sets where the controller records its events
// (upstream's, on pods and owners). nil records none. Without the option,
// New records them on a broadcaster of its own that writes through its
// client (WithEventSource names it), and NewReconciler panics, having no
// client.
func WithEventRecorder(r record.EventRecorder) Option {
	if r == nil {
		r = noEvents{}
	}
	set := core(childset.WithEventRecorder(r))
	return func(c *config) { c.recorder, c.recorderSet = r, true; set(c) }
}

// WithMetrics records syncs and scale-down choices into m. The core
// reports them itself, so New's driver and any other host (podsetcr) give
// the same measurements. nil means the default, no metrics.
func WithMetrics(m Metrics) Option {
	var sm childset.SyncMetrics
	if m != nil {
		sm = m
	}
	set := core(childset.WithSyncMetrics(sm))
	return func(c *config) { c.syncMetrics = m; set(c) }
}

// The options about pods.

// WithEventSource names the component of the events New's own broadcaster
// records (default "<kind>-controller", the owner kind in lower case); a
// recorder given by WithEventRecorder carries its own. It is an option of
// New's driver: NewReconciler refuses it. An empty component panics.
func WithEventSource(component string) Option {
	if component == "" {
		panic("podset: WithEventSource: empty component")
	}
	return func(c *config) { c.eventSource = component; c.driverOnly = append(c.driverOnly, "WithEventSource") }
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
// tests; it wins over WithPodWriter, and must create pods by name
// (podcontrol.NamedPodCreator). Its writes do not reach the
// read-your-writes guard, which learns of pod writes from the writer: give
// a writer (WithPodWriter) to write through another client. nil means the
// default, a pod control over the pod writer.
func WithPodControl(pc podcontrol.PodControl) Option {
	return func(c *config) { c.podControl = pc }
}

// WithScaleDownReporter registers a function called after every scale-down
// decision with the pods chosen and why. It runs inside a sync and must
// return quickly. nil means the default, no reporter.
func WithScaleDownReporter(f ScaleDownFunc) Option {
	return func(c *config) { c.onScaleDown = f }
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
	if d <= 0 {
		panic(fmt.Sprintf("podset: WithReadYourWritesTTL: the duration must be positive, not %v", d))
	}
	return func(c *config) { c.readYourWritesTTL = d }
}

// noEvents is the recorder of WithEventRecorder(nil): it records nothing.
type noEvents struct{}

func (noEvents) Event(runtime.Object, string, string, string)          {}
func (noEvents) Eventf(runtime.Object, string, string, string, ...any) {}
func (noEvents) AnnotatedEventf(runtime.Object, map[string]string, string, string, string, ...any) {
}
