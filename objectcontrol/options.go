package objectcontrol

import (
	"fmt"
	"time"
)

// Event reasons upstream's pod control records, the defaults of every
// control here, so dashboards and alerts keep working.
const (
	FailedCreateReason     = "FailedCreate"
	SuccessfulCreateReason = "SuccessfulCreate"
	FailedDeleteReason     = "FailedDelete"
	SuccessfulDeleteReason = "SuccessfulDelete"
)

// DefaultWriteTimeout bounds every write when no WithWriteTimeout is given. A
// context with an earlier deadline keeps it.
const DefaultWriteTimeout = 30 * time.Second

// EventReasons are the reasons of the events a control records.
type EventReasons struct {
	SuccessfulCreate, FailedCreate, SuccessfulDelete, FailedDelete string
}

// DefaultEventReasons returns upstream's reasons.
func DefaultEventReasons() EventReasons {
	return EventReasons{
		SuccessfulCreate: SuccessfulCreateReason,
		FailedCreate:     FailedCreateReason,
		SuccessfulDelete: SuccessfulDeleteReason,
		FailedDelete:     FailedDeleteReason,
	}
}

// Option configures New (and podcontrol's constructors, which take the same
// options). A nil Option is ignored.
type Option func(*config)

type config struct {
	reasons      EventReasons
	notFoundIsOK bool
	timeout      time.Duration
}

func newConfig(opts []Option) config {
	cfg := config{reasons: DefaultEventReasons(), timeout: DefaultWriteTimeout}
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	return cfg
}

// WithEventReasons replaces the event reasons; a field left empty keeps
// upstream's reason for it.
func WithEventReasons(reasons EventReasons) Option {
	return func(c *config) {
		set := func(dst *string, v string) {
			if v != "" {
				*dst = v
			}
		}
		set(&c.reasons.SuccessfulCreate, reasons.SuccessfulCreate)
		set(&c.reasons.FailedCreate, reasons.FailedCreate)
		set(&c.reasons.SuccessfulDelete, reasons.SuccessfulDelete)
		set(&c.reasons.FailedDelete, reasons.FailedDelete)
	}
}

// WithNotFoundAsSuccess makes a delete of an object that is already gone
// return nil. By default the NotFound error is returned, as upstream, and
// callers check apierrors.IsNotFound.
func WithNotFoundAsSuccess() Option {
	return func(c *config) { c.notFoundIsOK = true }
}

// WithWriteTimeout bounds each create, delete and patch to d (default
// DefaultWriteTimeout), so a stuck API call can't hold a worker forever. A
// d that is not positive panics.
func WithWriteTimeout(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("objectcontrol: WithWriteTimeout: the timeout must be positive, not %v", d))
	}
	return func(c *config) { c.timeout = d }
}
