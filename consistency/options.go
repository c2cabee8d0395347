package consistency

import (
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
)

// DefaultTTL is how long a written resource version may hold its owner back
// when no WithTTL is given. It matches the expectations package's timeout.
const DefaultTTL = 5 * time.Minute

// Option configures a Guard. A nil Option is ignored.
type Option func(*Guard)

// WithStore registers the informer store that reflects resource gr; a later
// registration for the same resource wins. Every client-go v0.36+
// cache.Store, cache.Indexer and informer GetStore() fits. Writes to a
// resource with no registered store are not recorded. A nil store is a
// programmer error and panics.
func WithStore(gr schema.GroupResource, store SyncedResourceVersioner) Option {
	if store == nil {
		panic(fmt.Sprintf("consistency: WithStore: nil store for %s", gr))
	}
	return func(g *Guard) { g.stores[gr] = store }
}

// WithClock sets the clock behind every record's age, so tests can step time
// instead of sleeping. The default is the real clock; a nil clock is a
// programmer error and panics.
func WithClock(clk clock.PassiveClock) Option {
	if clk == nil {
		panic("consistency: WithClock: nil clock; omit the option for the real clock")
	}
	return func(g *Guard) { g.clock = clk }
}

// WithTTL sets how long after an owner's last write the guard keeps holding
// it back; after that the owner syncs anyway, so a store that stopped
// advancing delays an owner by at most one TTL. The default is DefaultTTL.
// A zero or negative TTL is a programmer error and makes WithTTL panic, as
// time.NewTicker does with a non-positive interval.
func WithTTL(ttl time.Duration) Option {
	if ttl <= 0 {
		panic(fmt.Sprintf("consistency: WithTTL: non-positive TTL %v", ttl))
	}
	return func(g *Guard) { g.ttl = ttl }
}

// WithLogger sets the logger that reports an owner released by the TTL while
// its store was still behind. The default is klog.Background(); the zero
// logr.Logger discards.
func WithLogger(logger logr.Logger) Option {
	return func(g *Guard) { g.logger = logger }
}
