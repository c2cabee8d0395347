package shard

import (
	"fmt"
	"math"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Option configures a Member, and Assign's slots and load factor. Members of
// one ring must agree on WithSlots and WithLoadFactor, or they compute
// different assignments. A nil Option is ignored.
type Option func(*config)

// Defaults. A member renews three to four times per Lease duration, so one
// or two lost renewals never cost its ranges.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewInterval = 4 * time.Second
	DefaultSafetyMargin  = 3 * time.Second
	DefaultWriteTimeout  = 4 * time.Second
	DefaultSlots         = 1024
	DefaultLoadFactor    = 1.05
	MaxSlots             = 4096
)

type config struct {
	clock         clock.WithTicker
	leaseDuration time.Duration
	renewInterval time.Duration
	safetyMargin  time.Duration
	writeTimeout  time.Duration
	drainTimeout  time.Duration
	slots         int
	loadPermille  int
	logger        logr.Logger
	onChange      func(Ranges)
}

func newConfig(opts []Option) config {
	c := config{
		clock:         clock.RealClock{},
		leaseDuration: DefaultLeaseDuration,
		renewInterval: DefaultRenewInterval,
		safetyMargin:  DefaultSafetyMargin,
		writeTimeout:  DefaultWriteTimeout,
		slots:         DefaultSlots,
		loadPermille:  int(math.Round(DefaultLoadFactor * 1000)),
		logger:        klog.Background(),
	}
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	if c.drainTimeout == 0 {
		c.drainTimeout = c.leaseDuration
	}
	return c
}

// WithClock sets the clock behind Lease freshness, the renewal ticker and
// the fence, so tests step time instead of sleeping. The default is the real
// clock; nil panics.
func WithClock(clk clock.WithTicker) Option {
	if clk == nil {
		panic("shard: WithClock: nil clock; omit the option for the real clock")
	}
	return func(c *config) { c.clock = clk }
}

// WithLeaseDuration sets how long a member's Lease stays fresh after a
// renewal; others take over its ranges once they have seen the Lease
// unchanged for that long on their own clocks. It is written in whole
// seconds (leaseDurationSeconds), so it must be a positive multiple of a
// second. Members of a ring should use one duration: a member reads a
// peer's duration above max(10 × its own, 5 minutes) as that cap, so a
// hand-edited Lease can't block ranges for longer. The default is
// DefaultLeaseDuration.
func WithLeaseDuration(d time.Duration) Option {
	if d < time.Second || d%time.Second != 0 {
		panic(fmt.Sprintf("shard: WithLeaseDuration: %v is not a positive whole number of seconds", d))
	}
	return func(c *config) { c.leaseDuration = d }
}

// WithRenewInterval sets how often a member renews its Lease, publishes its
// claims and recomputes the assignment. The default is DefaultRenewInterval.
func WithRenewInterval(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("shard: WithRenewInterval: non-positive interval %v", d))
	}
	return func(c *config) { c.renewInterval = d }
}

// WithSafetyMargin sets how much earlier than its Lease's expiry a member
// stops trusting its own ranges: it covers the time a write already sent
// may still take and clocks running at slightly different rates. For the
// same reason a range the member gives up stays claimed for the margin
// after the last Guard over it ended: a write cancelled or abandoned under
// that Guard may still be stored. Clock
// offsets between replicas need no margin, since every member judges
// expiry on its own clock; an offset past the margin is logged and shows in
// PeerClockSkew. The default is DefaultSafetyMargin; zero is allowed for a
// single shared clock.
func WithSafetyMargin(d time.Duration) Option {
	if d < 0 {
		panic(fmt.Sprintf("shard: WithSafetyMargin: negative margin %v", d))
	}
	return func(c *config) { c.safetyMargin = d }
}

// WithWriteTimeout sets the deadline of every Lease write. The default is
// DefaultWriteTimeout.
func WithWriteTimeout(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("shard: WithWriteTimeout: non-positive timeout %v", d))
	}
	return func(c *config) { c.writeTimeout = d }
}

// WithDrainTimeout bounds how long a member keeps claiming a range it gave
// up while work under a Guard on it is still running; Guard contexts are
// cancelled at once, so this only matters for work that ignores its context.
// The default is the Lease duration.
func WithDrainTimeout(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("shard: WithDrainTimeout: non-positive timeout %v", d))
	}
	return func(c *config) { c.drainTimeout = d }
}

// WithSlots sets how many equal slots the hash space is cut into before
// slots are assigned. More slots balance more finely and move fewer keys on
// a change but make longer selectors and claims: a share has up to
// slots/members ranges, each about 90 bytes of selector (with 1024 slots and
// 3 members, about 230 ranges). The default is DefaultSlots; it must be in
// [1, MaxSlots], which keeps the claims annotation far below the API
// server's 256 KiB limit on annotations.
func WithSlots(n int) Option {
	if n < 1 || n > MaxSlots {
		panic(fmt.Sprintf("shard: WithSlots: %d slots is outside [1, %d]", n, MaxSlots))
	}
	return func(c *config) { c.slots = n }
}

// WithLoadFactor caps a member's share at f times the mean, f in [1, 2]. 1
// balances exactly but moves more slots between the remaining members on a
// change. The default is DefaultLoadFactor. It is kept to three decimals.
func WithLoadFactor(f float64) Option {
	if !(f >= 1 && f <= 2) {
		panic(fmt.Sprintf("shard: WithLoadFactor: %v is outside [1, 2]", f))
	}
	return func(c *config) { c.loadPermille = int(math.Round(f * 1000)) }
}

// WithLogger sets the logger for membership changes and Lease errors. The
// default is klog.Background().
func WithLogger(l logr.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithOnChange registers a function called with the member's new set of held
// ranges whenever it changes, from the goroutine of Run; informers restart
// their list and watch with the new selector there. It must not block for
// long. nil means no callback.
func WithOnChange(fn func(held Ranges)) Option {
	return func(c *config) { c.onChange = fn }
}
