package workqueue

import (
	"fmt"
	"time"

	"k8s.io/utils/clock"
)

// DefaultAgeing is how long an item may wait in the ready set before it is
// served ahead of higher priorities. It bounds the starvation that strict
// priorities cause (controller-runtime#3496) while leaving normal bursts
// ordered by priority.
const DefaultAgeing = 30 * time.Second

// Option configures a queue built by New, NewDelaying or NewRateLimiting.
type Option func(*config)

type config struct {
	name     string
	clock    clock.WithTicker
	provider MetricsProvider
	ageing   time.Duration
}

func newConfig(opts []Option) config {
	c := config{clock: clock.RealClock{}, ageing: DefaultAgeing}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithName names the queue. The name labels its metrics; an unnamed queue
// records no metrics, as in client-go.
func WithName(name string) Option {
	return func(c *config) { c.name = name }
}

// WithClock sets the clock used for delays, ageing and metrics, so tests can
// step time instead of sleeping (k8s.io/utils/clock/testing.FakeClock). The
// default is the real clock. The queue sets timers, so it needs a
// clock.WithTicker, the richest of the k8s.io/utils/clock interfaces.
func WithClock(cl clock.WithTicker) Option {
	return func(c *config) { c.clock = cl }
}

// WithMetricsProvider sets the provider of this queue's metrics; nil, the
// default, records none. It accepts
// client-go's workqueue.MetricsProvider, so existing Prometheus adapters plug
// in unchanged. The provider is used by this queue only: nothing is global.
// If the provider also implements WaitingMetricsProvider, the queue reports
// how many delayed items wait as well.
func WithMetricsProvider(p MetricsProvider) Option {
	return func(c *config) { c.provider = p }
}

// WithAgeing sets how long a ready item may wait before it is served ahead of
// items of higher priority, oldest first. Zero disables ageing and makes
// priorities strict. A negative d is a programmer error and panics.
func WithAgeing(d time.Duration) Option {
	if d < 0 {
		panic(fmt.Sprintf("workqueue: WithAgeing(%v): the ageing period must not be negative; 0 makes priorities strict", d))
	}
	return func(c *config) { c.ageing = d }
}
