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

// Option configures a queue built by New, NewDelaying or NewRateLimiting. A
// nil Option is ignored.
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
		if o != nil {
			o(&c)
		}
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
	if cl == nil {
		panic("workqueue: WithClock: nil clock; omit the option for the real clock")
	}
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
		panic(fmt.Sprintf("workqueue: WithAgeing: negative ageing period %v; 0 makes priorities strict", d))
	}
	return func(c *config) { c.ageing = d }
}

// DefaultMaxTrackedItems caps how many items a per-item limiter remembers,
// so a caller that never calls Forget cannot grow memory without bound
// (kubernetes#138743). At the cap a new item evicts the item with the fewest
// failures, so long backoffs survive; the evicted item restarts at the base
// delay, which is the safe direction to err in.
const DefaultMaxTrackedItems = 1 << 16

// LimiterOption configures the per-item limiters.
type LimiterOption func(*limiterConfig)

type limiterConfig struct{ maxTracked int }

// WithMaxTrackedItems sets the per-item history cap. n must be at least 1;
// anything less is a programmer error and panics.
func WithMaxTrackedItems(n int) LimiterOption {
	if n < 1 {
		panic(fmt.Sprintf("workqueue: WithMaxTrackedItems: cap %d is below 1", n))
	}
	return func(c *limiterConfig) { c.maxTracked = n }
}

func newLimiterConfig(opts []LimiterOption) limiterConfig {
	c := limiterConfig{maxTracked: DefaultMaxTrackedItems}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}
