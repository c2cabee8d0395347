package podsetcr

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/crclient"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/shardcr"
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
	copts     controller.Options
	sharding  *shardcr.Sharding
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

// WithControllerOptions sets controller-runtime's options for the
// controller: concurrency, rate limiter, reconcile timeout, priority queue,
// warm-up. A zero MaxConcurrentReconciles takes podset.WithWorkers.
func (b *Builder[O]) WithControllerOptions(o controller.Options) *Builder[O] {
	b.copts = o
	return b
}

// WithOptions adds podset options (workers, burst, feature gates, ...).
// They apply after the builder's own, so a WithEventRecorder or
// WithPodWriter given here wins. The options of podset's own driver
// (WithQueueName, WithEventSource, WithMetricsProvider, WithDrainTimeout,
// WithUnreachableBackoffCap) make Complete panic, as podset.NewReconciler
// does: controller-runtime's controller has its own (Named,
// WithControllerOptions).
func (b *Builder[O]) WithOptions(opts ...podset.Option) *Builder[O] {
	b.opts = append(b.opts, opts...)
	return b
}

// WithSharding makes the controller work only on the owners this replica
// holds in sharding's ring (see shardcr): owner and pod events of owners
// held elsewhere are dropped, each reconcile is fenced by the share's Guard
// and skipped for an owner held elsewhere, and when the share changes the
// owners now held are enqueued and the others' expectations forgotten. Run
// the ring's shardcr.Member in the same manager. With WithKind, owner reads
// are the kind's own and are not pinned to the fenced owner (see shardcr's
// Pins). The controller runs on every replica, leader or not
// (controller.Options.NeedLeaderElection false), unless
// WithControllerOptions sets NeedLeaderElection. nil means not sharded.
func (b *Builder[O]) WithSharding(s *shardcr.Sharding) *Builder[O] {
	b.sharding = s
	return b
}

// Complete checks the description, builds podset's core over the
// manager's informers and registers it with controller-runtime's builder as
// a plain reconcile.Reconciler (Controller), watching the owners and the
// pods through PodHandler and OwnerHandler. It contacts no API server.
//
// The pod and owner informers are the manager cache's own; podset adds its
// pod-by-owner index to the pod informer, and no second informer is
// started. Pods are created, adopted and deleted through the manager's
// client (crclient.Writer, podset.WithPodWriter), the one writer podset
// wraps with its events and read-your-writes recording; the owner's status
// goes through the manager's client too. Events go to the manager's
// recorder. The reconciler runs podset.WithWorkers reconciles at once
// unless the controller options say otherwise (WithControllerOptions).
func (b *Builder[O]) Complete() (*Controller[O], error) {
	if b.describer == nil && b.kind == nil {
		return nil, errors.New("podsetcr: the builder needs a describer or a kind")
	}
	kind := b.kind
	var pins *shardcr.Pins
	if kind == nil {
		var owners client.Reader = b.mgr.GetCache()
		if b.sharding != nil {
			// The core sees only the owner incarnation its reconcile was
			// fenced for.
			pins = shardcr.NewPins()
			owners = pins.Reader(owners)
		}
		k, err := NewKind(b.describer, owners, b.mgr.GetAPIReader(), b.mgr.GetClient(), b.mgr.GetScheme())
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
	// Asking the cache for an informer before the manager starts creates
	// it, to be started with the cache; nothing is contacted yet.
	ctx := context.Background()
	ownerInf, sharedOwners, err := informerFor(ctx, b.mgr.GetCache(), owner)
	if err != nil {
		return nil, err
	}
	podInf, sharedPods, err := informerFor(ctx, b.mgr.GetCache(), &corev1.Pod{})
	if err != nil {
		return nil, err
	}
	// ctrlkit's pod control records core/v1 events with upstream's reasons,
	// so it takes the manager's core/v1 recorder.
	recorder := b.mgr.GetEventRecorderFor(name) //nolint:staticcheck // the core/v1 recorder, deliberately
	opts := append([]podset.Option{
		podset.WithEventRecorder(recorder),
		podset.WithPodWriter(crclient.NewWriter[*corev1.Pod](b.mgr.GetClient())),
	}, b.opts...)
	// controller-runtime runs the queue, the workers and the handlers
	// (PodHandler, OwnerHandler): the core alone is built.
	coreCtx := klog.NewContext(ctx, b.mgr.GetLogger().WithValues("controller", name))
	var core *podset.Reconciler[O]
	if sharedOwners != nil && sharedPods != nil {
		// The informers' indexers, and a read-your-writes guard over
		// their stores.
		core, err = podset.NewReconciler(coreCtx, podInformer{sharedPods}, sharedOwners, kind, opts...)
	} else {
		// A cache restricted to namespaces: read through it.
		var reads podset.Reads[O]
		if reads, err = cacheReads(ctx, b.mgr, owner, gvk); err != nil {
			return nil, err
		}
		core, err = podset.NewCore(coreCtx, reads, kind, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("podsetcr: controller %s: %w", name, err)
	}
	c := &Controller[O]{name: name, core: core, hasSynced: []toolscache.InformerSynced{ownerInf.HasSynced, podInf.HasSynced}}
	copts := b.copts
	if copts.MaxConcurrentReconciles == 0 {
		copts.MaxConcurrentReconciles = core.Workers()
	}
	var ownerOpts, podOpts []builder.WatchesOption
	var registered reconcile.Reconciler = c
	// release forgets the expectations of an owner this replica gave up.
	release := func(o client.Object) { core.ObserveOwnerDelete(o) }
	if s := b.sharding; s != nil {
		// Every replica runs a sharded controller, leader or not, unless
		// the caller said otherwise.
		if copts.NeedLeaderElection == nil {
			copts.NeedLeaderElection = ptr.To(false)
		}
		ownerOpts = append(ownerOpts, builder.WithPredicates(s.OwnerPredicate()))
		podOpts = append(podOpts, builder.WithPredicates(s.ChildPredicate()))
		newOwner := func() client.Object { return owner.DeepCopyObject().(client.Object) } //nolint:forcetypeassert // a copy has the type of its original
		registered = shardcr.NewReconciler(c, s, b.mgr.GetCache(), newOwner, pins, release)
	}
	cb := builder.ControllerManagedBy(b.mgr).
		Named(name).
		Watches(owner, OwnerHandler[O]{core}, ownerOpts...).
		Watches(&corev1.Pod{}, PodHandler[O]{core}, podOpts...).
		WithOptions(copts)
	if s := b.sharding; s != nil {
		owners, err := ownerList(b.mgr.GetScheme(), owner, gvk)
		if err != nil {
			return nil, err
		}
		cb = cb.WatchesRawSource(shardcr.NewResync(s, b.mgr.GetCache(), owners, release))
	}
	err = cb.Complete(registered)
	if err != nil {
		return nil, fmt.Errorf("podsetcr: registering controller %s: %w", name, err)
	}
	return c, nil
}

// ownerList returns an empty list of owner's kind gvk, to list owners from
// the cache: unstructured for an unstructured owner, so that the list reads
// the informer the controller's watches use.
func ownerList(scheme *runtime.Scheme, owner client.Object, gvk schema.GroupVersionKind) (client.ObjectList, error) {
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	if _, ok := owner.(*unstructured.Unstructured); ok {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(listGVK)
		return list, nil
	}
	obj, err := scheme.New(listGVK)
	if err != nil {
		return nil, fmt.Errorf("podsetcr: the list kind of %s: %w", gvk, err)
	}
	list, ok := obj.(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("podsetcr: %s is a %T, not a list", listGVK, obj)
	}
	return list, nil
}
