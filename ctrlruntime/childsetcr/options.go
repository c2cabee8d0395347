package childsetcr

import (
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/shardcr"
)

// Option configures SetupWithManager. A nil Option is ignored.
type Option func(*config)

type config struct {
	name        string
	ctrlOptions controller.Options
	childset    []childset.Option
	sharding    *shardcr.Sharding
}

func newConfig(opts []Option) config {
	var cfg config
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	return cfg
}

// WithName names the controller: the name controller-runtime's metrics,
// logs and events carry, and the one it checks for uniqueness. The default
// is the owner's kind in lower case, as controller-runtime's builder names
// controllers; two controllers for one owner kind need distinct names.
func WithName(name string) Option {
	return func(c *config) { c.name = name }
}

// WithControllerOptions passes options to controller-runtime's controller:
// MaxConcurrentReconciles, RateLimiter, NewQueue, UsePriorityQueue,
// EnableWarmup, ReconciliationTimeout and the rest apply as for any
// controller built with the builder. Setting opts.Reconciler is refused by
// the builder: the reconciler is childset's.
func WithControllerOptions(opts controller.Options) Option {
	return func(c *config) { c.ctrlOptions = opts }
}

// WithChildSetOptions passes options to the core (childset.WithIndexedNames,
// WithBurstReplicas, WithDeletionOrder, ...). They apply after the ones
// SetupWithManager sets (the manager's event recorder), so a
// childset.WithEventRecorder given here wins (nil: no events). childset.WithWorkers sets the
// reconciles run at once unless WithControllerOptions does, and
// childset.WithStaleCachePoll the poll of an owner held by the
// read-your-writes guard. The options of childset's own driver
// (WithQueueName, WithMetricsProvider, WithDrainTimeout,
// WithUnreachableBackoffCap) would mean nothing here, as
// controller-runtime's controller has its own, so childset.NewReconciler
// panics on them.
func WithChildSetOptions(opts ...childset.Option) Option {
	return func(c *config) { c.childset = append(c.childset, opts...) }
}

// WithSharding makes the controller work only on the owners this replica
// holds in sharding's ring (see shardcr): owner and child events of owners
// held elsewhere are dropped, each reconcile is fenced by the share's Guard
// and skipped for an owner held elsewhere, and when the share changes the
// owners now held are enqueued and the others' expectations forgotten. Run
// the ring's shardcr.Member in the same manager. The controller runs on
// every replica, leader or not (controller.Options.NeedLeaderElection
// false), unless WithControllerOptions sets NeedLeaderElection. The manager
// runs the fenced reconciler; the Reconciler SetupWithManager returns is
// the unfenced one inside it. nil means not sharded.
func WithSharding(sharding *shardcr.Sharding) Option {
	return func(c *config) { c.sharding = sharding }
}
