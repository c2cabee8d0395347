package workerset

import (
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/kubernetes"
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
	// client and revisions are WithRollingUpdates'; nil without it.
	client    kubernetes.Interface
	revisions appsinformers.ControllerRevisionInformer
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

// WithRollingUpdates makes the controller roll Workers out to a changed
// spec.template (RollingSet), recording each template as a
// ControllerRevision written through client and read from revisions, and
// write the WorkerSets' status. NewController registers the revisions
// informer with its factory: start that factory; Run waits for its
// cache. A nil client or informer panics.
func WithRollingUpdates(client kubernetes.Interface, revisions appsinformers.ControllerRevisionInformer) Option {
	if client == nil || revisions == nil {
		panic("workerset: WithRollingUpdates: nil client or revisions informer")
	}
	return func(c *config) { c.client, c.revisions = client, revisions }
}
