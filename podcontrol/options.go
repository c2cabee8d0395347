package podcontrol

import (
	"time"

	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// Event reasons upstream records, the defaults of every control here, so
// dashboards and alerts keep working.
const (
	FailedCreatePodReason     = objectcontrol.FailedCreateReason
	SuccessfulCreatePodReason = objectcontrol.SuccessfulCreateReason
	FailedDeletePodReason     = objectcontrol.FailedDeleteReason
	SuccessfulDeletePodReason = objectcontrol.SuccessfulDeleteReason
)

// EventReasons are the reasons of the events a control records.
type EventReasons = objectcontrol.EventReasons

// DefaultEventReasons returns upstream's reasons.
func DefaultEventReasons() EventReasons { return objectcontrol.DefaultEventReasons() }

// Option configures NewRealPodControl and NewPodControl. They are
// objectcontrol's options: a pod control follows the same rules as a
// control of any other kind. A nil Option is ignored.
type Option = objectcontrol.Option

// WithEventReasons replaces the event reasons; a field left empty keeps
// upstream's reason for it.
func WithEventReasons(reasons EventReasons) Option { return objectcontrol.WithEventReasons(reasons) }

// WithNotFoundAsSuccess makes a delete of a pod that is already gone return
// nil. By default the NotFound error is returned, as upstream, and callers
// check apierrors.IsNotFound.
func WithNotFoundAsSuccess() Option { return objectcontrol.WithNotFoundAsSuccess() }

// WithWriteTimeout bounds each write to d (default
// objectcontrol.DefaultWriteTimeout); a d that is not positive panics.
func WithWriteTimeout(d time.Duration) Option { return objectcontrol.WithWriteTimeout(d) }
