package crhistory

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/history"
)

// Option configures New. A nil Option is ignored.
type Option func(*config)

type config struct {
	live           client.Reader
	requestTimeout time.Duration
}

func newConfig(opts []Option) config {
	c := config{requestTimeout: history.DefaultRequestTimeout}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithLiveReader reads a revision whose name a creation found taken through
// r (the manager's API reader) rather than the cache: the revision may be
// one a previous sync created and the cache has not seen yet. nil means the
// cache.
func WithLiveReader(r client.Reader) Option {
	return func(c *config) { c.live = r }
}

// WithRequestTimeout bounds every API request; the default is
// history.DefaultRequestTimeout. It panics if d is not positive: every
// write must have a deadline.
func WithRequestTimeout(d time.Duration) Option {
	if d <= 0 {
		panic("crhistory: WithRequestTimeout: the timeout must be positive")
	}
	return func(c *config) { c.requestTimeout = d }
}
