package podsetcr

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/shardcr"
	"github.com/ctrlkit/ctrlkit/podset"
)

// Option configures SetupWithManager. The options about the controller in
// the manager are childsetcr's, handed to childsetcr.Register as given;
// the others are about pods. A nil Option is ignored.
type Option func(*config)

type config struct {
	host     []childsetcr.Option
	name     string
	sharding *shardcr.Sharding
	podset   []podset.Option
	kind     any // a podset.Kind[O] for SetupWithManager's O
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

func host(o childsetcr.Option) Option { return func(c *config) { c.host = append(c.host, o) } }

// WithName is childsetcr.WithName; the name is also the source of the
// controller's events.
func WithName(name string) Option {
	set := host(childsetcr.WithName(name))
	return func(c *config) { c.name = name; set(c) }
}

// WithControllerOptions is childsetcr.WithControllerOptions; a zero
// MaxConcurrentReconciles takes podset.WithWorkers.
func WithControllerOptions(opts controller.Options) Option {
	return host(childsetcr.WithControllerOptions(opts))
}

// WithSharding is childsetcr.WithSharding. Pods are not pinned to the
// fenced owner (see shardcr's Pins): their reads are the kind's own.
func WithSharding(s *shardcr.Sharding) Option {
	set := host(childsetcr.WithSharding(s))
	return func(c *config) { c.sharding = s; set(c) }
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
