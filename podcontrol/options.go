package podcontrol

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Event reasons upstream records, the defaults of every control here, so
// dashboards and alerts keep working.
const (
	FailedCreatePodReason     = "FailedCreate"
	SuccessfulCreatePodReason = "SuccessfulCreate"
	FailedDeletePodReason     = "FailedDelete"
	SuccessfulDeletePodReason = "SuccessfulDelete"
)

// EventReasons are the reasons of the events a control records.
type EventReasons struct {
	SuccessfulCreate, FailedCreate, SuccessfulDelete, FailedDelete string
}

// DefaultEventReasons returns upstream's reasons.
func DefaultEventReasons() EventReasons {
	return EventReasons{
		SuccessfulCreate: SuccessfulCreatePodReason,
		FailedCreate:     FailedCreatePodReason,
		SuccessfulDelete: SuccessfulDeletePodReason,
		FailedDelete:     FailedDeletePodReason,
	}
}

// Option configures NewRealPodControl and NewObjectControl.
type Option func(*config)

type config struct {
	reasons      EventReasons
	onWrite      func(*v1.Pod, *metav1.OwnerReference)
	notFoundIsOK bool
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

// WithOnWrite registers a hook called with every pod the API server returns
// from a successful create or patch, and the controller reference involved.
// Upstream uses it (v1.36) to feed a read-your-writes consistency store, so
// the next sync waits for the informer to catch up with its own writes. It
// applies to RealPodControl only.
func WithOnWrite(fn func(pod *v1.Pod, controllerRef *metav1.OwnerReference)) Option {
	return func(c *config) { c.onWrite = fn }
}
