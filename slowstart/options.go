package slowstart

// Option configures a Batch call.
type Option func(*config)

type config struct {
	// maxConcurrency <= 0 means every call of a batch may run at once, which is
	// upstream's behaviour.
	maxConcurrency int
}

// WithMaxConcurrency caps the number of calls that run at the same time within
// a batch. It protects a rate-limited client or API server from a large batch
// (a batch of 512 pod creations would otherwise open 512 requests at once).
// Batch boundaries and the stop-on-failure rule are unchanged. n <= 0 means no
// cap, which is the default.
func WithMaxConcurrency(n int) Option {
	return func(c *config) { c.maxConcurrency = n }
}
