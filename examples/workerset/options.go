package workerset

import (
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// Option configures NewController. A nil Option is ignored.
type Option func(*config)

type config struct {
	recorder    record.EventRecorder
	setOpts     []childset.Option
	controlOpts []objectcontrol.Option
}

// WithEventRecorder records the events of the core (refused specs, name
// conflicts) and of the Worker writes (created, deleted, failures) against
// the WorkerSet. nil records none.
func WithEventRecorder(recorder record.EventRecorder) Option {
	return func(c *config) { c.recorder = recorder }
}

// WithSetOptions passes options to childset.New: workers, burst, indexed
// names, deletion order, clock, queue metrics.
func WithSetOptions(opts ...childset.Option) Option {
	return func(c *config) { c.setOpts = append(c.setOpts, opts...) }
}

// WithControlOptions passes options to the Worker writer
// (objectcontrol.New): write timeout, event reasons, write hook.
func WithControlOptions(opts ...objectcontrol.Option) Option {
	return func(c *config) { c.controlOpts = append(c.controlOpts, opts...) }
}
