package gang

import (
	"k8s.io/client-go/dynamic"
	appsinformers "k8s.io/client-go/informers/apps/v1"
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
	// dyn and revisions are WithRollingUpdates'; nil without it.
	dyn       dynamic.Interface
	revisions appsinformers.ControllerRevisionInformer
}

// WithEventRecorder records the events of the core (refused specs, name
// conflicts) and of the pod writes (created, deleted, failures) against
// the Gang. nil records none.
func WithEventRecorder(recorder record.EventRecorder) Option {
	return func(c *config) { c.recorder = recorder }
}

// WithSetOptions passes options to childset.New, after the
// childset.WithIndexedNames(nil) NewController starts with: workers,
// burst, another naming function, clock, queue metrics.
func WithSetOptions(opts ...childset.Option) Option {
	return func(c *config) { c.setOpts = append(c.setOpts, opts...) }
}

// WithControlOptions passes options to the pod writer
// (objectcontrol.New): write timeout, event reasons, write hook.
func WithControlOptions(opts ...objectcontrol.Option) Option {
	return func(c *config) { c.controlOpts = append(c.controlOpts, opts...) }
}

// WithRollingUpdates makes the controller roll pods out to a changed
// spec.template (RollingGangs), index by index, recording each template
// as a ControllerRevision written through NewController's client and read
// from revisions, and write the Gangs' status through dyn. NewController
// registers the revisions informer with its factory: start that factory;
// Run waits for its cache. A nil client or informer panics.
func WithRollingUpdates(dyn dynamic.Interface, revisions appsinformers.ControllerRevisionInformer) Option {
	if dyn == nil || revisions == nil {
		panic("gang: WithRollingUpdates: nil client or revisions informer")
	}
	return func(c *config) { c.dyn, c.revisions = dyn, revisions }
}
