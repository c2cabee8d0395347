package slowstart

import "fmt"

// Option configures a Batch or BatchIndexed call. A nil Option is ignored.
type Option func(*config)

type config struct {
	// maxConcurrency 0 means every call of a batch may run at once, which is
	// upstream's behaviour.
	maxConcurrency int
}

// WithMaxConcurrency caps the number of calls that run at the same time within
// a batch. It protects a rate-limited client or API server from a large batch
// (a batch of 512 pod creations would otherwise open 512 requests at once).
// Batch boundaries and the stop-on-failure rule are unchanged. Zero means no
// cap, which is the default. A negative n is a programmer error and panics.
func WithMaxConcurrency(n int) Option {
	if n < 0 {
		panic(fmt.Sprintf("slowstart: WithMaxConcurrency: negative cap %d; the cap must be positive, or 0 for none", n))
	}
	return func(c *config) { c.maxConcurrency = n }
}

func newConfig(opts []Option) config {
	var c config
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	return c
}
