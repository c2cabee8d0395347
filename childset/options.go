package childset

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	cgworkqueue "k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/history"
)

// Defaults.
const (
	// DefaultBurstReplicas caps the children created or deleted in one
	// sync, as kube-controller-manager caps ReplicaSets' pods.
	DefaultBurstReplicas = 500
	// DefaultNameConflictRetry is when an owner whose wanted name is held
	// by a foreign object is looked at again.
	DefaultNameConflictRetry = 10 * time.Second
	// DefaultWorkers is the number of owners Controller syncs at once.
	DefaultWorkers = 5
	// DefaultWriteTimeout bounds each API write of a sync (WithWriteTimeout).
	DefaultWriteTimeout = 30 * time.Second
	// DefaultDrainTimeout bounds Controller's graceful stop (Drain).
	DefaultDrainTimeout = 30 * time.Second
	// DefaultStaleCachePoll is when an owner held by the read-your-writes
	// guard (WithReadYourWrites) is looked at again.
	DefaultStaleCachePoll = time.Second
	// DefaultUnreachableBackoffCap caps Controller's retry delay after a
	// sync failed because the API server could not be reached.
	DefaultUnreachableBackoffCap = 30 * time.Second
)

// Option configures NewReconciler and New. A With* given a value that can
// never be right panics at the call; a nil Option is ignored.
type Option func(*config)

type config struct {
	burst         int
	conflictRetry time.Duration
	ttl           time.Duration
	clock         clock.Clock
	recorder      record.EventRecorder
	indexed       bool
	nameFunc      NameFunc
	order         any // Order[C] for the reconciler's C
	workers       int
	drainTimeout  time.Duration
	writeTimeout  time.Duration
	queueName     string
	metrics       cgworkqueue.MetricsProvider
	guard         *consistency.Guard
	guardResource schema.GroupResource
	history       history.Interface
	historySynced []cache.InformerSynced
	stalePoll     time.Duration
	backoffCap    time.Duration
	// driverOptions names the options given that only New's driver
	// applies; NewReconciler refuses them unless driven is set.
	driverOptions []string
	driven        bool
}

// driverOption records that the option called name, which only New's
// driver applies, was given.
func (c *config) driverOption(name string) { c.driverOptions = append(c.driverOptions, name) }

func newConfig(opts []Option) config {
	cfg := config{
		burst:         DefaultBurstReplicas,
		conflictRetry: DefaultNameConflictRetry,
		ttl:           expectations.ExpectationsTimeout,
		clock:         clock.RealClock{},
		workers:       DefaultWorkers,
		drainTimeout:  DefaultDrainTimeout,
		writeTimeout:  DefaultWriteTimeout,
		stalePoll:     DefaultStaleCachePoll,
		backoffCap:    DefaultUnreachableBackoffCap,
	}
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
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

// WithBurstReplicas caps the creations or deletions of one sync (default
// DefaultBurstReplicas). n < 1 panics.
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

// WithClock sets the clock of the expectations and of requeue delays; nil
// means clock.RealClock{}.
func WithClock(clk clock.Clock) Option {
	return func(c *config) {
		if clk == nil {
			clk = clock.RealClock{}
		}
		c.clock = clk
	}
}

// WithEventRecorder sets where the core records its Warning events
// (selector refused, name conflict). nil records none. The writer records
// its own create and delete events.
func WithEventRecorder(recorder record.EventRecorder) Option {
	return func(c *config) { c.recorder = recorder }
}

// WithWorkers sets how many owners Controller syncs at once (default
// DefaultWorkers); another host reads it from Reconciler.Workers. n < 1
// panics.
func WithWorkers(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("childset: WithWorkers: at least one worker is needed, not %d", n))
	}
	return func(c *config) { c.workers = n }
}

// WithDrainTimeout bounds Controller's graceful stop (Drain): queued owners
// keep being synced until the queue is empty or this much time has passed,
// after which in-flight syncs are cancelled (default DefaultDrainTimeout).
// Zero cancels them at once; a negative d panics.
func WithDrainTimeout(d time.Duration) Option {
	if d < 0 {
		panic(fmt.Sprintf("childset: WithDrainTimeout: the timeout must not be negative, not %v", d))
	}
	return func(c *config) { c.drainTimeout = d; c.driverOption("WithDrainTimeout") }
}

// WithWriteTimeout bounds every API write a sync makes through the writer
// (each create, delete, adoption and release patch) and the Spec's status
// write (default DefaultWriteTimeout). A sync stops waiting for a write at
// its deadline even if the writer ignores its context: the write is
// abandoned on its own goroutine, and its error wraps
// context.DeadlineExceeded. d <= 0 panics.
func WithWriteTimeout(d time.Duration) Option {
	mustBePositive("WithWriteTimeout", d)
	return func(c *config) { c.writeTimeout = d }
}

// WithReadYourWrites holds each owner until the child informer has seen
// the controller's own writes for it: every child the core creates or
// adopts is recorded in guard against the owner, as resource children, and
// a sync of an owner whose cache is behind returns an error matching
// consistency.ErrStaleCache before it reads anything. Drivers poll such an
// owner instead of backing off (Controller does; so does ctrlkit's
// controller-runtime host). guard must have a store for children
// (consistency.WithStore); nil turns the guard off (the default).
// Expectations already keep a lagging cache from causing extra creations;
// the guard also keeps a sync from acting on children older than its own
// adoptions.
func WithReadYourWrites(guard *consistency.Guard, children schema.GroupResource) Option {
	return func(c *config) { c.guard, c.guardResource = guard, children }
}

// WithQueueName names Controller's work queue, for its metrics. It is an
// option of New's driver: NewReconciler refuses it, as it does
// WithMetricsProvider, WithDrainTimeout and WithUnreachableBackoffCap.
func WithQueueName(name string) Option {
	return func(c *config) { c.queueName = name; c.driverOption("WithQueueName") }
}

// WithMetricsProvider publishes Controller's work queue metrics; nil means
// none.
func WithMetricsProvider(p cgworkqueue.MetricsProvider) Option {
	return func(c *config) { c.metrics = p; c.driverOption("WithMetricsProvider") }
}

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
// guard (WithReadYourWrites) is looked at again (default
// DefaultStaleCachePoll). A stale cache is not a failure, so it neither
// waits on nor feeds the failure backoff. Controller applies it; another
// host reads it from Reconciler.StaleCachePoll. d <= 0 panics.
func WithStaleCachePoll(d time.Duration) Option {
	mustBePositive("WithStaleCachePoll", d)
	return func(c *config) { c.stalePoll = d }
}

// WithUnreachableBackoffCap caps Controller's retry delay after a sync
// failed because the API server could not be reached or could not answer
// (default DefaultUnreachableBackoffCap), so owners resume soon after an
// outage. It is an option of New's driver: NewReconciler refuses it. d <= 0
// panics.
func WithUnreachableBackoffCap(d time.Duration) Option {
	mustBePositive("WithUnreachableBackoffCap", d)
	return func(c *config) { c.backoffCap = d; c.driverOption("WithUnreachableBackoffCap") }
}

// mustBePositive panics, as the With* option named opt must, if d is not a
// positive duration.
func mustBePositive(opt string, d time.Duration) {
	if d <= 0 {
		panic(fmt.Sprintf("childset: %s: the duration must be positive, not %v", opt, d))
	}
}
