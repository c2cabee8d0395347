package childset

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	cgworkqueue "k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/history"
	"github.com/ctrlkit/ctrlkit/internal/syncloop"
)

// Defaults.
const (
	// DefaultBurstReplicas caps the children created or deleted in one
	// sync, as kube-controller-manager caps ReplicaSets' pods.
	DefaultBurstReplicas = 500
	// DefaultNameConflictRetry is when an owner whose wanted name is held
	// by a foreign object is looked at again.
	DefaultNameConflictRetry = 10 * time.Second
	// DefaultWorkers is the number of owners synced at once.
	DefaultWorkers = syncloop.DefaultWorkers
	// DefaultWriteTimeout bounds each API write of a sync.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultDrainTimeout bounds a graceful stop (Drain).
	DefaultDrainTimeout = syncloop.DefaultDrainTimeout
	// DefaultStaleCachePoll is how often an owner held by the
	// read-your-writes guard is looked at again.
	DefaultStaleCachePoll = syncloop.DefaultStaleCachePoll
	// DefaultUnreachableBackoffCap caps the retry delay after a sync failed
	// because the API server could not be reached or could not answer.
	DefaultUnreachableBackoffCap = syncloop.DefaultUnreachableBackoffCap
)

// Option configures New and NewReconciler. A With* given a value that can
// never be right (a zero worker count, a negative duration, an empty name)
// panics at the call, naming itself: a programmer error, caught at
// start-up. A nil Option is ignored. A nil argument keeps the option's
// default; two of them mean the same in podset, where they are not the
// default: a nil recorder records no events (WithEventRecorder) and a nil
// guard turns the read-your-writes guard off (WithReadYourWrites).
type Option func(*config)

type config struct {
	syncloop.Options // the clock and the driver's options, shared with podset
	burst            int
	conflictRetry    time.Duration
	ttl              time.Duration
	recorder         record.EventRecorder
	indexed          bool
	nameFunc         NameFunc
	order            any // Order[C] for the reconciler's C
	writeTimeout     time.Duration
	guard            *consistency.Guard
	history          history.Interface
	historySynced    []cache.InformerSynced
	gates            func(feature string) bool
	syncGuard        SyncGuard
	metrics          SyncMetrics
	owners           any // func(namespace string) ([]O, error) for the reconciler's O
	events           *eventSink
	claims           *claimConfig // WithClaims'; nil without
}

func newConfig(opts []Option) config {
	cfg := config{
		Options:       syncloop.DefaultOptions(),
		burst:         DefaultBurstReplicas,
		conflictRetry: DefaultNameConflictRetry,
		ttl:           expectations.ExpectationsTimeout,
		writeTimeout:  DefaultWriteTimeout,
		gates:         DefaultFeatureGates,
	}
	syncloop.Apply(&cfg, opts)
	return cfg
}

// WithIndexedNames selects the indexed identity mode: children are named by
// name (nil means DefaultName, "<owner>-<index>"). name must give distinct
// names for distinct indices.
func WithIndexedNames(name NameFunc) Option {
	return func(c *config) {
		c.indexed = true
		c.nameFunc = name
		if name == nil {
			c.nameFunc = DefaultName
		}
	}
}

// WithDeletionOrder replaces DefaultOrder in interchangeable mode. A nil
// order keeps the default. NewReconciler panics when C is not the child
// type.
func WithDeletionOrder[C Object](order Order[C]) Option {
	return func(c *config) {
		if order == nil {
			c.order = nil
			return
		}
		c.order = order
	}
}

// WithBurstReplicas caps the children one sync creates or deletes (default
// DefaultBurstReplicas). n < 1 panics: a cap of zero would stall every
// owner.
func WithBurstReplicas(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("childset: WithBurstReplicas: the burst must be at least 1, not %d", n))
	}
	return func(c *config) { c.burst = n }
}

// WithNameConflictRetry sets when an owner blocked by a foreign object
// holding a wanted name is retried (default DefaultNameConflictRetry).
// d <= 0 panics.
func WithNameConflictRetry(d time.Duration) Option {
	mustBePositive("WithNameConflictRetry", d)
	return func(c *config) { c.conflictRetry = d }
}

// WithExpectationsTTL sets how long unobserved creations and deletions hold
// an owner back (default expectations.ExpectationsTimeout). d <= 0 panics.
func WithExpectationsTTL(d time.Duration) Option {
	mustBePositive("WithExpectationsTTL", d)
	return func(c *config) { c.ttl = d }
}

// WithClock sets the clock of the expectations, of availability
// (minReadySeconds) and of the work queue's delays; write deadlines are in
// real time, as the API client's are. nil means clock.RealClock{}.
func WithClock(clk clock.Clock) Option { return shared(syncloop.Clock(clk)) }

// WithEventRecorder sets where the core records its Warning events
// (selector refused, name conflict); the writer records its own create
// and delete events. nil records none, as does leaving the option out.
func WithEventRecorder(recorder record.EventRecorder) Option {
	return func(c *config) { c.recorder = recorder }
}

// WithEventBroadcaster makes New's driver own b: Run starts it recording to
// sink (and logging each event at verbosity 3) and shuts it down when it
// returns. Give the recorder it makes (b.NewRecorder) to
// WithEventRecorder. It is an option of New's
// driver: NewReconciler refuses it. A nil b or sink panics.
func WithEventBroadcaster(b record.EventBroadcaster, sink record.EventSink) Option {
	if b == nil || sink == nil {
		panic("childset: WithEventBroadcaster: nil broadcaster or sink")
	}
	only := syncloop.DriverOnly("WithEventBroadcaster")
	return func(c *config) { c.events = &eventSink{b, sink}; only(&c.Options) }
}

// eventSink is WithEventBroadcaster's broadcaster and where it records.
type eventSink struct {
	broadcaster record.EventBroadcaster
	sink        record.EventSink
}

// WithWorkers sets how many owners are synced at once (default
// DefaultWorkers); a host reads it from Reconciler.Workers. n < 1 panics.
func WithWorkers(n int) Option { return shared(syncloop.Workers("childset", n)) }

// WithDrainTimeout bounds a graceful stop (Drain): queued owners are still
// synced for this long, then in-flight syncs are cancelled (default
// DefaultDrainTimeout). Zero cancels them at once; a negative d panics. It
// is an option of New's driver: NewReconciler refuses it.
func WithDrainTimeout(d time.Duration) Option { return shared(syncloop.DrainTimeout("childset", d)) }

// WithWriteTimeout bounds every API write of a sync: each create, delete,
// adoption and release patch through the writer, and the Spec's status
// write, gets a deadline this far ahead (default DefaultWriteTimeout). A
// sync stops waiting for a write at its deadline even if the writer
// ignores its context: the write is abandoned on its own goroutine, and
// its error wraps context.DeadlineExceeded. d <= 0 panics.
func WithWriteTimeout(d time.Duration) Option {
	mustBePositive("WithWriteTimeout", d)
	return func(c *config) { c.writeTimeout = d }
}

// WithReadYourWrites sets the read-your-writes guard: a sync of an owner
// waits until the child informer has seen the controller's own writes for
// it, the children the core created or adopted, which it records under
// the resource of guard's one store (consistency.WithStore over the child
// informer's store). Until then Reconcile returns an error matching
// consistency.ErrStaleCache before it reads anything, and drivers poll the
// owner every WithStaleCachePoll instead of backing off (Controller does;
// so does ctrlkit's controller-runtime host). nil turns the guard off, as
// does leaving the option out: childset knows neither its children's
// resource nor their store, where podset builds its guard itself.
// NewReconciler panics on a guard with more than one store. Expectations
// already keep a lagging cache from causing extra creations; the guard
// also keeps a sync from acting on children older than its own adoptions.
func WithReadYourWrites(guard *consistency.Guard) Option {
	return func(c *config) { c.guard = guard }
}

// WithQueueName names the work queue, for its metrics (default the owner
// kind in lower case). It is an option of New's driver: NewReconciler
// refuses it. An empty name panics.
func WithQueueName(name string) Option { return shared(syncloop.QueueName("childset", name)) }

// WithMetricsProvider publishes the work queue's metrics there; nothing is
// registered globally. nil means none (the default). It is an option of
// New's driver: NewReconciler refuses it.
func WithMetricsProvider(p cgworkqueue.MetricsProvider) Option { return shared(syncloop.Metrics(p)) }

// WithRevisions keeps the owners' revisions in h, for a Spec that
// implements RolloutSpec (rolling updates); NewReconciler panics when one
// is given without the other. history.NewHistory writes ControllerRevisions
// through client-go; history.NewFakeHistory keeps them in an informer's
// store, for tests. A nil h panics.
//
// synced reports whether the cache h reads holds every revision, such as
// the revision informer's HasSynced; Controller.Run waits for it as for the
// owner and child informers. Without it, a sync just after a start finds
// no revision: it publishes the update revision as the current one, and
// keeps no history to truncate, until the cache fills.
func WithRevisions(h history.Interface, synced ...cache.InformerSynced) Option {
	if h == nil {
		panic("childset: WithRevisions: nil history")
	}
	return func(c *config) { c.history, c.historySynced = h, synced }
}

// WithStaleCachePoll sets how soon an owner held by the read-your-writes
// guard is looked at again (default DefaultStaleCachePoll); a host reads
// it from Reconciler.StaleCachePoll. A stale cache is not a failure, so it
// neither waits on nor feeds the failure backoff. d <= 0 panics.
func WithStaleCachePoll(d time.Duration) Option {
	return shared(syncloop.StaleCachePoll("childset", d))
}

// WithUnreachableBackoffCap caps the retry delay of a sync that failed
// because the API server could not be reached or could not answer
// (default DefaultUnreachableBackoffCap), so owners resume soon after an
// outage. It is an option of New's driver: NewReconciler refuses it.
// d <= 0 panics.
func WithUnreachableBackoffCap(d time.Duration) Option {
	return shared(syncloop.UnreachableBackoffCap("childset", d))
}

// WithFeatureGates consults enabled, at every sync, about upstream's
// feature gates that change what the core does (see the gate constants);
// nil means the default, DefaultFeatureGates (upstream v1.37.2's).
func WithFeatureGates(enabled func(feature string) bool) Option {
	return func(c *config) {
		if enabled == nil {
			enabled = DefaultFeatureGates
		}
		c.gates = enabled
	}
}

// SyncGuard fences one sync of the owner with the "namespace/name" key: it
// returns the context the sync's reads and writes run under and a function
// to call when the sync is over, and ok false when this replica must not
// touch the owner now (done is then never called). A refusal with
// retryAfter > 0 says the owner is this replica's to sync once it may
// again (its share is being taken up, or its Lease renewed): the owner is
// looked at again after that delay, so no event is lost to the refusal.
// With retryAfter 0 another replica syncs it. shard's Epoch.Fence is one.
type SyncGuard func(ctx context.Context, key string) (guarded context.Context, done func(), retryAfter time.Duration, ok bool)

// WithSyncGuard runs every sync under g, for a controller sharded over
// replicas: a sync of an owner outside this replica's share is skipped
// (no write; requeued only when g asks for it), and a sync whose guarded
// context ends (the share moved on) stops writing at once and fails, to be
// looked at again. nil means no guard.
func WithSyncGuard(g SyncGuard) Option {
	return func(c *config) { c.syncGuard = g }
}

// WithOwnerLister gives the Observe methods the owners of a namespace, so
// that an orphan's event wakes the owners that may adopt it (see
// ObserveAdd). New's driver lists them from its owner informer; a host
// with its own handlers gives its own (childsetcr and podset do). A list
// for another owner type than the reconciler's panics in NewReconciler;
// nil means none.
func WithOwnerLister[O Object](list func(namespace string) ([]O, error)) Option {
	return func(c *config) {
		if list == nil {
			c.owners = nil
			return
		}
		c.owners = list
	}
}

// SyncMetrics receives the duration and the error of every sync, from
// whichever host drives the core.
type SyncMetrics interface {
	// ObserveSync reports one sync of an owner of kind: how long it took
	// and the error it returned (nil on success).
	ObserveSync(kind string, took time.Duration, err error)
}

// WithSyncMetrics reports every sync to m; nil reports nothing.
func WithSyncMetrics(m SyncMetrics) Option { return func(c *config) { c.metrics = m } }

// shared makes an Option of set, one of the options shared with
// podset define (internal/syncloop).
func shared(set syncloop.Set) Option { return func(c *config) { set(&c.Options) } }

// mustBePositive panics, as the With* option named opt must, if d is not a
// positive duration.
func mustBePositive(opt string, d time.Duration) { syncloop.MustBePositive("childset", opt, d) }
