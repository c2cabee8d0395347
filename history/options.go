package history

import (
	"time"

	"k8s.io/client-go/tools/cache"
)

// DefaultRequestTimeout bounds each API request NewHistory sends when the
// caller's context has no earlier deadline.
const DefaultRequestTimeout = 30 * time.Second

// Option configures NewHistory.
type Option func(*config)

type config struct {
	indexer        cache.Indexer
	requestTimeout time.Duration
}

func newConfig(opts []Option) config {
	c := config{requestTimeout: DefaultRequestTimeout}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithIndexer makes ListControllerRevisions look revisions up through the
// ControllerRevisionControllerIndex of indexer (see
// AddControllerRevisionControllerIndexer) instead of listing the namespace.
// It is upstream NewHistory's third argument. nil means no indexer.
func WithIndexer(indexer cache.Indexer) Option {
	return func(c *config) { c.indexer = indexer }
}

// WithRequestTimeout bounds every API request. It panics if d is not
// positive: every write must have a deadline.
func WithRequestTimeout(d time.Duration) Option {
	if d <= 0 {
		panic("history: WithRequestTimeout: the timeout must be positive")
	}
	return func(c *config) { c.requestTimeout = d }
}
