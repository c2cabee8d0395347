package podsetcr

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/shardcr"
	"github.com/ctrlkit/ctrlkit/podset"
)

// Option configures SetupWithManager, as childsetcr's options configure
// its SetupWithManager. A nil Option is ignored.
type Option func(*config)

type config struct {
	name        string
	ctrlOptions controller.Options
	podset      []podset.Option
	sharding    *shardcr.Sharding
	kind        any // a podset.Kind[O] for SetupWithManager's O
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

// WithName names the controller: its work queue's name in the workqueue
// metrics, the source of its events, and the name controller-runtime
// checks for uniqueness. The default is the owner kind in lower case, as
// controller-runtime's builder names controllers.
func WithName(name string) Option {
	return func(c *config) { c.name = name }
}

// WithControllerOptions passes options to controller-runtime's controller:
// concurrency, rate limiter, reconcile timeout, priority queue, warm-up. A
// zero MaxConcurrentReconciles takes podset.WithWorkers.
func WithControllerOptions(opts controller.Options) Option {
	return func(c *config) { c.ctrlOptions = opts }
}

// WithPodSetOptions passes options to the core (workers, burst, feature
// gates, ...). They apply after SetupWithManager's own, so a
// podset.WithEventRecorder or WithPodWriter given here wins. The options
// of podset's own driver (WithQueueName, WithEventSource,
// WithMetricsProvider, WithDrainTimeout, WithUnreachableBackoffCap) make
// SetupWithManager panic, as podset.NewReconciler does:
// controller-runtime's controller has its own (WithName,
// WithControllerOptions).
func WithPodSetOptions(opts ...podset.Option) Option {
	return func(c *config) { c.podset = append(c.podset, opts...) }
}

// WithKind replaces the Kind SetupWithManager would make from the
// describer over the manager's clients (NewKind), for owners read or
// written another way; its owner type must be SetupWithManager's O.
func WithKind[O client.Object](k podset.Kind[O]) Option {
	return func(c *config) { c.kind = k }
}

// WithSharding makes the controller work only on the owners this replica
// holds in s's ring (see shardcr): owner and pod events of owners held
// elsewhere are dropped, each reconcile is fenced by the share's Guard and
// skipped for an owner held elsewhere, and when the share changes the
// owners now held are enqueued and the others' expectations forgotten.
// Run the ring's shardcr.Member in the same manager. Pods are not pinned
// to the fenced owner (see shardcr's Pins): their reads are the kind's
// own. The controller runs on every replica, leader or not
// (controller.Options.NeedLeaderElection false), unless
// WithControllerOptions sets NeedLeaderElection. nil means not sharded.
func WithSharding(s *shardcr.Sharding) Option {
	return func(c *config) { c.sharding = s }
}

// kindOf is WithKind's Kind, nil when none was given.
func kindOf[O client.Object](k any) (podset.Kind[O], error) {
	if k == nil {
		return nil, nil
	}
	kind, ok := k.(podset.Kind[O])
	if !ok {
		var zero O
		return nil, fmt.Errorf("podsetcr: WithKind: a %T, not a podset.Kind for %T", k, zero)
	}
	return kind, nil
}
