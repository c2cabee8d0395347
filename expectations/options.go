package expectations

import (
	"fmt"
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

// WithTTL sets how long a record stays trusted; the default is
// ExpectationsTimeout. A zero or negative TTL would make every owner look
// satisfied at once, so it is a programmer error: NewControllerExpectations
// panics on it, as time.NewTicker does on a non-positive interval.
func WithTTL(ttl time.Duration) Option {
	return func(c *config) {
		if ttl <= 0 {
			panic(fmt.Sprintf("expectations: non-positive TTL %v", ttl))
		}
		c.ttl = ttl
	}
}

// WithClock sets the clock behind every timestamp and expiry decision, so
// tests can step time instead of sleeping. The default is the real clock.
func WithClock(clk clock.PassiveClock) Option {
	return func(c *config) { c.clock = clk }
}

// WithLogger sets the logger for the one event worth reporting, a record
// that expires while still unfulfilled. The default is klog.Background().
func WithLogger(logger logr.Logger) Option {
	return func(c *config) { c.logger = logger }
}
