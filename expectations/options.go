package expectations

import (
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Option configures a ControllerExpectations.
type Option func(*config)

type config struct {
	ttl    time.Duration
	clock  clock.PassiveClock
	logger logr.Logger
}

func defaultConfig() config {
	return config{ttl: ExpectationsTimeout, clock: clock.RealClock{}, logger: klog.Background()}
}

// WithTTL sets how long a record stays trusted. A zero or negative TTL is
// ignored (the default ExpectationsTimeout stays), because a record that
// expires at once would make every owner look satisfied.
func WithTTL(ttl time.Duration) Option {
	return func(c *config) {
		if ttl > 0 {
			c.ttl = ttl
		}
	}
}

// WithClock sets the clock used for every timestamp and expiry decision, so
// tests can step time instead of sleeping. A nil clock is ignored.
func WithClock(clk clock.PassiveClock) Option {
	return func(c *config) {
		if clk != nil {
			c.clock = clk
		}
	}
}

// WithLogger sets the logger for the few events worth reporting, chiefly a
// record that expires while still unfulfilled. The default is
// klog.Background(). A logger with a nil sink discards everything.
func WithLogger(logger logr.Logger) Option {
	return func(c *config) {
		c.logger = logger
	}
}
