package expectations

import (
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Option configures a ControllerExpectations. A nil Option is ignored.
type Option func(*config)

type config struct {
	ttl    time.Duration
	clock  clock.PassiveClock
	logger logr.Logger
}

func newConfig(opts []Option) config {
	c := config{ttl: ExpectationsTimeout, clock: clock.RealClock{}, logger: klog.Background()}
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	return c
}

// WithTTL sets how long a record stays trusted; the default is
// ExpectationsTimeout. A zero or negative TTL would make every owner look
// satisfied at once, so it is a programmer error: WithTTL panics on it, as
// time.NewTicker does on a non-positive interval.
func WithTTL(ttl time.Duration) Option {
	if ttl <= 0 {
		panic(fmt.Sprintf("expectations: WithTTL: non-positive TTL %v", ttl))
	}
	return func(c *config) { c.ttl = ttl }
}

// WithClock sets the clock behind every timestamp and expiry decision, so
// tests can step time instead of sleeping. The default is the real clock; a
// nil clock is a programmer error and panics.
func WithClock(clk clock.PassiveClock) Option {
	if clk == nil {
		panic("expectations: WithClock: nil clock; omit the option for the real clock")
	}
	return func(c *config) { c.clock = clk }
}

// WithLogger sets the logger for the one event worth reporting, a record
// that expires while still unfulfilled. The default is klog.Background();
// the zero logr.Logger discards.
func WithLogger(logger logr.Logger) Option {
	return func(c *config) { c.logger = logger }
}
