package validation

import (
	"fmt"
	"time"
)

// DefaultWriteTimeout bounds ValidatePodTemplateWithServer's dry-run create
// when no WithWriteTimeout is given; a context with an earlier deadline
// keeps it.
const DefaultWriteTimeout = 30 * time.Second

// Option configures ValidatePodTemplateWithServer. A nil Option is ignored.
type Option func(*config)

type config struct {
	timeout time.Duration
}

func newConfig(opts []Option) config {
	cfg := config{timeout: DefaultWriteTimeout}
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	return cfg
}

// WithWriteTimeout bounds the dry-run create to d, even if the client
// ignores its context. A d that is not positive panics.
func WithWriteTimeout(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("validation: WithWriteTimeout: the timeout must be positive, not %v", d))
	}
	return func(c *config) { c.timeout = d }
}
