package syncloop

import (
	"fmt"
	"strings"
	"time"

	cgworkqueue "k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// The defaults of a set core's driver, kube-controller-manager's for the
// ReplicaSet controller; podset and childset export them under these names.
const (
	DefaultWorkers, DefaultDrainTimeout                 = 5, 30 * time.Second
	DefaultStaleCachePoll, DefaultUnreachableBackoffCap = time.Second, 30 * time.Second
)

// Options are the settings podset's and childset's With* options share:
// the clock, and what their client-go driver (New) runs the core with. One
// definition, so that the two cores take these options with the same
// names, defaults and panics. Clock is the core's as well as the driver's;
// Workers and StaleCachePoll also reach a host that drives the core itself
// (Reconciler.Workers, StaleCachePoll); the rest only New's driver
// applies, and a host refuses them (RefuseDriverOnly).
type Options struct {
	// Clock times the core's expectations and the queue's delays.
	Clock                 clock.Clock
	Workers               int
	DrainTimeout          time.Duration
	StaleCachePoll        time.Duration
	UnreachableBackoffCap time.Duration
	// QueueName is the queue's name; "" leaves the driver's default.
	QueueName string
	// Metrics is the queue's metrics provider; nil means no metrics.
	Metrics cgworkqueue.MetricsProvider

	// driverOnly names the driver-only options given, in order.
	driverOnly []string
	// driven is set by New, whose driver applies every option.
	driven bool
}

// DefaultOptions are the Options before any With* applies.
func DefaultOptions() Options {
	return Options{
		Clock:                 clock.RealClock{},
		Workers:               DefaultWorkers,
		DrainTimeout:          DefaultDrainTimeout,
		StaleCachePoll:        DefaultStaleCachePoll,
		UnreachableBackoffCap: DefaultUnreachableBackoffCap,
	}
}

// Apply applies opts to cfg in order, skipping a nil one, as a set core's
// newConfig does with its Options.
func Apply[C any, O ~func(*C)](cfg *C, opts []O) {
	for _, o := range opts {
		if o != nil {
			o(cfg)
		}
	}
}

// Set changes Options; the With* functions below return one, having
// checked their argument at the call, so a wrong value panics where it is
// written.
type Set func(*Options)

// Clock sets Options.Clock; nil means clock.RealClock{}.
func Clock(clk clock.Clock) Set {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return func(o *Options) { o.Clock = clk }
}

// Workers sets Options.Workers; pkg names the calling package in the
// panic of an n below 1.
func Workers(pkg string, n int) Set {
	if n < 1 {
		panic(fmt.Sprintf("%s: WithWorkers: there must be at least 1 worker, not %d", pkg, n))
	}
	return func(o *Options) { o.Workers = n }
}

// DrainTimeout sets Options.DrainTimeout, a driver-only option; zero is
// allowed (cancel at once), a negative d panics.
func DrainTimeout(pkg string, d time.Duration) Set {
	if d < 0 {
		panic(fmt.Sprintf("%s: WithDrainTimeout: the timeout must not be negative, not %v", pkg, d))
	}
	return func(o *Options) { o.DrainTimeout = d; o.driverOnly = append(o.driverOnly, "WithDrainTimeout") }
}

// StaleCachePoll sets Options.StaleCachePoll; d must be positive.
func StaleCachePoll(pkg string, d time.Duration) Set {
	MustBePositive(pkg, "WithStaleCachePoll", d)
	return func(o *Options) { o.StaleCachePoll = d }
}

// UnreachableBackoffCap sets Options.UnreachableBackoffCap, a driver-only
// option; d must be positive.
func UnreachableBackoffCap(pkg string, d time.Duration) Set {
	MustBePositive(pkg, "WithUnreachableBackoffCap", d)
	return func(o *Options) {
		o.UnreachableBackoffCap = d
		o.driverOnly = append(o.driverOnly, "WithUnreachableBackoffCap")
	}
}

// QueueName sets Options.QueueName, a driver-only option; an empty name
// panics, since it would turn the queue's metrics off.
func QueueName(pkg, name string) Set {
	if name == "" {
		panic(pkg + ": WithQueueName: empty name")
	}
	return func(o *Options) { o.QueueName = name; o.driverOnly = append(o.driverOnly, "WithQueueName") }
}

// Metrics sets Options.Metrics, a driver-only option even when p is nil:
// the caller asked for the driver's queue.
func Metrics(p cgworkqueue.MetricsProvider) Set {
	return func(o *Options) { o.Metrics = p; o.driverOnly = append(o.driverOnly, "WithMetricsProvider") }
}

// DriverOnly records that the driver-only option called name, defined by
// the calling package, was given.
func DriverOnly(name string) Set {
	return func(o *Options) { o.driverOnly = append(o.driverOnly, name) }
}

// Driven marks Options as applied by New's driver, which honours them all.
func Driven(o *Options) { o.driven = true }

// RefuseDriverOnly panics when driver-only options were given to a core
// that New does not drive: the host has a queue and workers of its own, and
// ignoring the options would leave the caller believing they apply.
func (o *Options) RefuseDriverOnly(pkg string) {
	if len(o.driverOnly) > 0 && !o.driven {
		panic(fmt.Sprintf("%s: NewReconciler: %s configure New's driver, not the core; set the host's own equivalents",
			pkg, strings.Join(o.driverOnly, ", ")))
	}
}

// Configure copies the clock, the timings and the worker count into l.
func (o *Options) Configure(l *Loop) {
	l.Clock = o.Clock
	l.Workers = o.Workers
	l.DrainTimeout = o.DrainTimeout
	l.StaleCachePoll = o.StaleCachePoll
	l.UnreachableBackoffCap = o.UnreachableBackoffCap
}

// MustBePositive panics, naming pkg and the option opt, if d is not a
// positive duration.
func MustBePositive(pkg, opt string, d time.Duration) {
	if d <= 0 {
		panic(fmt.Sprintf("%s: %s: the duration must be positive, not %v", pkg, opt, d))
	}
}
