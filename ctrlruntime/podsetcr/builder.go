package podsetcr

import (
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
	"github.com/ctrlkit/ctrlkit/podset"
)

// Builder assembles a podset controller for one owner kind in a manager.
// Start with NewControllerManagedBy, then Complete.
type Builder[O client.Object] struct {
	mgr       manager.Manager
	describer Describer[O]
	kind      podset.Kind[O]
	name      string
	opts      []podset.Option
}

// NewControllerManagedBy starts a Builder for owners described by d, run by
// mgr. O is the owner's Go type: a pointer to a generated type registered
// in the manager's scheme, or *unstructured.Unstructured.
func NewControllerManagedBy[O client.Object](mgr manager.Manager, d Describer[O]) *Builder[O] {
	return &Builder[O]{mgr: mgr, describer: d}
}

// Named sets the controller's name: the name label of its workqueue metrics
// and the source of its events. The default is the owner kind in lower case,
// as controller-runtime's builder names controllers.
func (b *Builder[O]) Named(name string) *Builder[O] {
	b.name = name
	return b
}

// WithKind replaces the Kind that the builder would make from the describer
// over the manager's clients (NewKind), for owners read or written another
// way.
func (b *Builder[O]) WithKind(k podset.Kind[O]) *Builder[O] {
	b.kind = k
	return b
}

// WithOptions adds podset options (workers, burst, feature gates, ...).
// They apply after the builder's own, so WithNames or WithMetricsProvider
// given here win.
func (b *Builder[O]) WithOptions(opts ...podset.Option) *Builder[O] {
	b.opts = append(b.opts, opts...)
	return b
}

// Complete checks the description, builds the controller and adds it to
// the manager; it contacts no API server (the controller does when it
// starts, see Controller).
//
// The pod and owner informers are the manager cache's own: podset registers
// its event handlers and pod-by-owner index on them, and no second informer
// is started. Pods are created, adopted and deleted through the manager's
// client (crclient.Writer, podset.WithPodWriter), the one writer podset
// wraps with its events and read-your-writes recording; the owner's status goes
// through the manager's client too. Events go to the manager's recorder,
// and the work queue's metrics to controller-runtime's workqueue series on
// the manager's /metrics, labelled with the controller's name.
func (b *Builder[O]) Complete() (*Controller[O], error) {
	if b.describer == nil && b.kind == nil {
		return nil, errors.New("podsetcr: the builder needs a describer or a kind")
	}
	kind := b.kind
	if kind == nil {
		k, err := NewKind(b.describer, b.mgr.GetCache(), b.mgr.GetAPIReader(), b.mgr.GetClient(), b.mgr.GetScheme())
		if err != nil {
			return nil, err
		}
		kind = k
	}
	gvk := kind.GroupVersionKind()
	owner, err := emptyObject[O](b.mgr.GetScheme(), gvk)
	if err != nil {
		return nil, err
	}
	name := b.name
	if name == "" {
		name = strings.ToLower(gvk.Kind)
	}
	metrics, err := ctrlruntime.NewMetricsProvider(crmetrics.Registry)
	if err != nil {
		return nil, err
	}
	// ctrlkit's pod control records core/v1 events with upstream's reasons,
	// so it takes the manager's core/v1 recorder.
	recorder := b.mgr.GetEventRecorderFor(name) //nolint:staticcheck // the core/v1 recorder, deliberately
	c := &Controller[O]{
		name: name, kind: kind, owner: owner, cache: b.mgr.GetCache(),
		client: b.mgr.GetClient(), recorder: recorder,
		opts: append([]podset.Option{
			podset.WithNames(name, name),
			podset.WithMetricsProvider(metrics),
			podset.WithEventRecorder(recorder),
		}, b.opts...),
		logger: b.mgr.GetLogger().WithValues("controller", name, "controllerKind", gvk.Kind),
	}
	if err := b.mgr.Add(c); err != nil {
		return nil, fmt.Errorf("podsetcr: adding controller %s to the manager: %w", name, err)
	}
	return c, nil
}
