package childsetcr

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/crclient"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/crhistory"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/shardcr"
)

// Spec is the owner adapter: childset.Spec without Get, since owners are
// read from the manager's cache. Besides NewChild it gives the owner's
// fields in one of two shapes, checked when the controller is built:
//
//   - Describe(owner O), returning childset.Fields, or childset.RolloutFields
//     for a kind whose owners roll out (childset.Describer,
//     childset.RolloutDescriber): every field in one struct, with the
//     defaults it documents, and the status, when Fields.Status points at
//     it, written by the host;
//   - a getter per field: Replicas and Selector, and the optional
//     childset.MinReadySpec, RolloutSpec, HistoryLimitSpec,
//     CollisionCountSpec, PauseSpec, ProgressSpec and DeletionGateSpec,
//     with the status written through StatusSetter or childset.StatusSpec.
//
// A Spec with Describe is read only through it. GroupVersionKind is
// needed only for an unstructured owner; a typed owner's kind is read
// from the scheme. A spec that has Get as well (a whole childset.Spec) is
// read through its own Get and getters instead.
type Spec[O, C client.Object] interface {
	// NewChild builds a child to create for owner (see childset.Spec).
	NewChild(owner O) (C, error)
}

// Kind is the child adapter: childset.Kind without the Lister, since
// children are listed from the manager's cache (Lister). A kind that is a
// whole childset.Kind lists through its own Lister instead. Its optional
// childset.ReadySinceKind says since when a child is ready, for
// minReadySeconds; podset.PodReadiness is the Kind of pods.
type Kind[C client.Object] interface {
	// Ready reports whether a child is ready; the default deletion order
	// deletes children that are not ready first, then those whose
	// childset.DeletionCostAnnotation is lowest: a child of any kind
	// carries upstream's pod-deletion-cost annotation to be deleted first.
	Ready(child C) bool
}

// SetupWithManager adds a controller to mgr that keeps, for each owner of
// type O, the children of type C that spec asks for, and returns its
// reconciler. O and C are pointers to API structs registered in the
// manager's scheme with their list kinds (O may be
// *unstructured.Unstructured, its kind being spec's). It contacts no API
// server; the controller starts with the manager.
//
// Owners are read from the manager's cache, and read live through its API
// reader before an adoption (childset.LiveReader), unless spec has a Get of
// its own. It builds childset's core writing through the manager's client (strategic
// merge patches for the kinds client-go knows, JSON merge patches for
// custom resources) with events from the manager's recorder, and registers
// it with controller-runtime's builder: For the owner, and Watches of the
// owner (OwnerHandler) and the child (ChildHandler). A nil mgr, spec or
// kind panics.
//
// A spec that implements childset.RolloutSpec rolls its owners' children
// out revision by revision: SetupWithManager then passes
// childset.WithRevisions with a crhistory.History over the manager's
// client, cache and API reader (a WithRevisions among opts wins), and
// watches ControllerRevisions, so a revision changed or deleted by someone
// else syncs the owner controlling it. The manager's scheme must hold
// apps/v1 (an error otherwise), and the controller's RBAC needs get, list,
// watch, create, update, patch and delete on
// apps/controllerrevisions. A spec whose Describe returns
// childset.RolloutFields rolls out the same way. The optional interfaces of
// childset (StatusSpec, MinReadySpec, RolloutSpec, HistoryLimitSpec,
// CollisionCountSpec, PauseSpec, ProgressSpec, ScaleInSpec,
// DeletionGateSpec, DeletionReleaser) are honoured on a spec without Get as
// on a whole childset.Spec; StatusSetter and Describe's Fields.Status and
// Fields.DeletionGate serve a spec without Get. A spec with neither Describe nor
// Replicas and Selector is an error, as is an unstructured owner whose
// spec has no GroupVersionKind.
//
// ControllerField is registered on the child kind in the manager's cache
// when the controller starts, with its event sources and before its first
// reconcile (registering it asks the API server for the child's resource,
// which a manager not started yet must not need).
func SetupWithManager[O, C client.Object](mgr manager.Manager, spec Spec[O, C], kind Kind[C], opts ...Option) (*Reconciler[O, C], error) {
	if mgr == nil || spec == nil || kind == nil {
		panic("childsetcr: SetupWithManager: nil manager, spec or kind")
	}
	cfg := newConfig(opts)
	gvk, err := ownerKind(spec, mgr.GetScheme())
	if err != nil {
		return nil, err
	}
	name := cfg.name
	if name == "" {
		name = strings.ToLower(gvk.Kind)
	}
	// objectcontrol records core/v1 events with upstream's reasons, so the
	// core takes the manager's core/v1 recorder.
	recorder := mgr.GetEventRecorderFor(name) //nolint:staticcheck // the core/v1 recorder, deliberately
	var pins *shardcr.Pins
	var owners client.Reader = mgr.GetCache()
	if _, ownGet := spec.(childset.Spec[O, C]); !ownGet && cfg.sharding != nil {
		// The core sees only the owner incarnation its reconcile was
		// fenced for.
		pins = shardcr.NewPins()
		owners = pins.Reader(owners)
	}
	// Owners from the cache, and the owner checked live before an adoption,
	// as upstream re-reads it: a cached owner may not show yet that it is
	// being deleted.
	full, err := completeSpec(spec, gvk, owners, mgr.GetAPIReader(), mgr.GetClient())
	if err != nil {
		return nil, err
	}
	coreOpts := cfg.childset
	rolls := rollsOut(full)
	if rolls {
		if err := checkRevisionScheme(mgr.GetScheme()); err != nil {
			return nil, err
		}
		// Before the caller's options, so a WithRevisions of theirs wins.
		h := crhistory.New(mgr.GetClient(), mgr.GetCache(), crhistory.WithLiveReader(mgr.GetAPIReader()))
		coreOpts = append([]childset.Option{childset.WithRevisions(h)}, coreOpts...)
	}
	core, err := newCore(mgr.GetClient(), mgr.GetCache(), recorder, full, gvk, kind, coreOpts...)
	if err != nil {
		return nil, err
	}
	_, ownLister := kind.(childset.Lister[C])
	return register(mgr, core, gvk, pins, cfg, func(b *builder.Builder) (*builder.Builder, error) {
		if rolls {
			// A revision changed or deleted by someone else syncs its owner.
			revisionOwner, err := newObject[O](gvk)
			if err != nil {
				return nil, err
			}
			b = b.Watches(&appsv1.ControllerRevision{}, handler.EnqueueRequestForOwner(
				mgr.GetScheme(), mgr.GetRESTMapper(), revisionOwner, handler.OnlyControllerOwner()))
		}
		if !ownLister {
			b = b.WatchesRawSource(indexSource[C]{indexer: mgr.GetFieldIndexer()})
		}
		return b, nil
	})
}

// Register adds core, built elsewhere over the manager's cache (podsetcr
// builds pods' so), to mgr as SetupWithManager adds the core it builds:
// For the owner, Watches of the owner (OwnerHandler) and of the child
// (ChildHandler), with WithName, WithControllerOptions and WithSharding
// applied; WithChildSetOptions has no core left to configure and is
// refused. pins are the pins the core reads owners through
// (shardcr.Pins.Reader) when sharded, or nil. It contacts no API server.
// A nil mgr or core panics.
func Register[O, C client.Object](mgr manager.Manager, core *childset.Reconciler[O, C], pins *shardcr.Pins, opts ...Option) (*Reconciler[O, C], error) {
	if mgr == nil || core == nil {
		panic("childsetcr: Register: nil manager or core")
	}
	cfg := newConfig(opts)
	if len(cfg.childset) > 0 {
		return nil, errors.New("childsetcr: Register: the core is built already; WithChildSetOptions has nothing to configure")
	}
	return register(mgr, core, core.GroupVersionKind(), pins, cfg, nil)
}

// register is Register, with more sources and watches added by more when
// it is not nil.
func register[O, C client.Object](mgr manager.Manager, core *childset.Reconciler[O, C], gvk schema.GroupVersionKind, pins *shardcr.Pins, cfg config,
	more func(*builder.Builder) (*builder.Builder, error)) (*Reconciler[O, C], error) {
	// For and Watches get objects of their own: a source keeps the object
	// it is given.
	owner, err := newObject[O](gvk)
	if err != nil {
		return nil, err
	}
	watchedOwner, _ := newObject[O](gvk)
	child, err := newObject[C](schema.GroupVersionKind{})
	if err != nil {
		return nil, err
	}
	name := cfg.name
	if name == "" {
		name = strings.ToLower(gvk.Kind)
	}
	r := NewReconciler(core)
	var childOpts []builder.WatchesOption
	var ownerForOpts []builder.ForOption
	var registered reconcile.Reconciler = r
	ctrlOptions := cfg.ctrlOptions
	if ctrlOptions.MaxConcurrentReconciles == 0 {
		// The core's worker count (childset.WithWorkers).
		ctrlOptions.MaxConcurrentReconciles = core.Workers()
	}
	// release forgets the expectations of an owner this replica gave up.
	release := func(obj client.Object) {
		if o, ok := obj.(O); ok {
			core.ObserveOwnerDelete(o)
		}
	}
	if s := cfg.sharding; s != nil {
		// Every replica runs a sharded controller, leader or not, unless
		// the caller said otherwise.
		if ctrlOptions.NeedLeaderElection == nil {
			ctrlOptions.NeedLeaderElection = ptr.To(false)
		}
		ownerForOpts = append(ownerForOpts, builder.WithPredicates(s.OwnerPredicate()))
		childOpts = append(childOpts, builder.WithPredicates(s.ChildPredicate()))
		newOwner := func() client.Object { o, _ := newObject[O](gvk); return o }
		registered = shardcr.NewReconciler(r, s, mgr.GetCache(), newOwner, pins, release)
	}
	b := builder.ControllerManagedBy(mgr).
		Named(name).
		For(owner, ownerForOpts...).
		Watches(watchedOwner, NewOwnerHandler(core)).
		Watches(child, NewChildHandler(core), childOpts...).
		WithOptions(ctrlOptions)
	if more != nil {
		if b, err = more(b); err != nil {
			return nil, err
		}
	}
	if s := cfg.sharding; s != nil {
		owners, err := listFor(owner, mgr.GetScheme())
		if err != nil {
			return nil, err
		}
		b = b.WatchesRawSource(shardcr.NewResync(s, mgr.GetCache(), owners, release))
	}
	if err := b.Complete(registered); err != nil {
		return nil, fmt.Errorf("childsetcr: building controller %s: %w", name, err)
	}
	return r, nil
}

// NewCore builds childset's core for spec and kind as SetupWithManager
// does, over controller-runtime clients: owners are read and children
// listed through reader (nil means c), which must carry ControllerField on
// the child kind unless kind is a whole childset.Kind (AddControllerIndex;
// for the fake client, WithIndex(child, ControllerField, IndexByController)),
// and children are written through c: strategic merge patches for the kinds
// client-go knows, JSON merge patches for custom resources, which refuse
// the former. Events go to recorder (nil records none); opts apply after
// childset.WithEventRecorder(recorder) and, for a spec that implements
// childset.RolloutSpec, after childset.WithRevisions over crhistory.New(c,
// reader). A nil c, spec or kind panics.
func NewCore[O, C client.Object](c client.Client, reader client.Reader, recorder record.EventRecorder, spec Spec[O, C], kind Kind[C], opts ...childset.Option) (*childset.Reconciler[O, C], error) {
	if c == nil || spec == nil || kind == nil {
		panic("childsetcr: NewCore: nil client, spec or kind")
	}
	if reader == nil {
		reader = c
	}
	gvk, err := ownerKind(spec, c.Scheme())
	if err != nil {
		return nil, err
	}
	fullSpec, err := completeSpec(spec, gvk, reader, nil, c)
	if err != nil {
		return nil, err
	}
	if rollsOut(fullSpec) {
		if err := checkRevisionScheme(c.Scheme()); err != nil {
			return nil, err
		}
		// Before opts, so a WithRevisions among them wins.
		opts = append([]childset.Option{childset.WithRevisions(crhistory.New(c, reader))}, opts...)
	}
	return newCore(c, reader, recorder, fullSpec, gvk, kind, opts...)
}

// newCore builds the core for fullSpec, completed already, as NewCore
// describes.
func newCore[O, C client.Object](c client.Client, reader client.Reader, recorder record.EventRecorder, fullSpec childset.Spec[O, C], gvk schema.GroupVersionKind, kind Kind[C], opts ...childset.Option) (*childset.Reconciler[O, C], error) {
	child, err := newObject[C](schema.GroupVersionKind{})
	if err != nil {
		return nil, err
	}
	childGVK, err := apiutil.GVKForObject(child, c.Scheme())
	if err != nil {
		return nil, fmt.Errorf("childsetcr: the child kind: %w", err)
	}
	fullKind, ok := kind.(childset.Kind[C])
	if !ok {
		lister, err := NewLister[C](reader, c.Scheme())
		if err != nil {
			return nil, err
		}
		fullKind = cachedKind[C]{Lister: lister, Kind: kind}
		if since, ok := kind.(childset.ReadySinceKind[C]); ok {
			fullKind = cachedSinceKind[C]{cachedKind: cachedKind[C]{Lister: lister, Kind: kind}, since: since}
		}
	}
	patchType := types.MergePatchType
	if clientgoscheme.Scheme.Recognizes(childGVK) {
		patchType = types.StrategicMergePatchType
	}
	owners, err := OwnerLister[O](reader, c.Scheme(), gvk)
	if err != nil {
		return nil, err
	}
	writer := crclient.NewObjectControl[C](c, childGVK.Kind, recorder, patchType)
	return childset.NewReconciler(fullSpec, fullKind, writer,
		append([]childset.Option{childset.WithEventRecorder(recorder), childset.WithOwnerLister(owners)}, opts...)...), nil
}

// OwnerLister lists the owners of kind gvk in a namespace through reader,
// for the core's Observe methods (childset.WithOwnerLister). O must be
// registered in scheme with its list kind, or be
// *unstructured.Unstructured.
func OwnerLister[O client.Object](reader client.Reader, scheme *runtime.Scheme, gvk schema.GroupVersionKind) (func(string) ([]O, error), error) {
	owner, err := newObject[O](gvk)
	if err != nil {
		return nil, err
	}
	empty, err := listFor(owner, scheme)
	if err != nil {
		return nil, err
	}
	// The cache's reads of a synced informer never block; the core's
	// listing has no context to pass.
	return func(namespace string) ([]O, error) {
		list, _ := empty.DeepCopyObject().(client.ObjectList)
		if err := reader.List(context.Background(), list, client.InNamespace(namespace)); err != nil {
			return nil, fmt.Errorf("childsetcr: listing owners: %w", err)
		}
		return extract[O](list)
	}, nil
}

// cachedSpec completes a Spec with Get from the manager's cache, with its
// fields read through fields, and with the status write of a StatusSetter
// or a Describer through status, re-reading a conflicting owner through
// reread.
type cachedSpec[O, C client.Object] struct {
	Spec[O, C]
	fields ownerFields[O]
	gvk    schema.GroupVersionKind
	reader client.Reader
	status client.StatusClient
	reread client.Reader
}

// GroupVersionKind is the user's, or the owner's kind in the scheme.
func (s cachedSpec[O, C]) GroupVersionKind() schema.GroupVersionKind { return s.gvk }

func (s cachedSpec[O, C]) Replicas(owner O) int32 { return s.fields.Replicas(owner) }

func (s cachedSpec[O, C]) Selector(owner O) (labels.Selector, error) { return s.fields.Selector(owner) }

func (s cachedSpec[O, C]) Get(namespace, name string) (O, error) {
	// A NotFound error goes back as it is: the core reads it as the owner
	// gone. The cache's reads never block once it synced, and the core's
	// Spec has no context to pass.
	return s.read(context.Background(), s.reader, namespace, name)
}

// read reads the owner called name from reader into a new object.
func (s cachedSpec[O, C]) read(ctx context.Context, reader client.Reader, namespace, name string) (O, error) {
	var zero O
	owner, err := newObject[O](s.gvk)
	if err != nil {
		return zero, err
	}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, owner); err != nil {
		return zero, err
	}
	return owner, nil
}

// liveSpec is a cachedSpec that reads owners live too (childset.LiveReader),
// through the manager's API reader.
type liveSpec[O, C client.Object] struct {
	cachedSpec[O, C]
	live client.Reader
}

func (s liveSpec[O, C]) GetLive(ctx context.Context, namespace, name string) (O, error) {
	return s.read(ctx, s.live, namespace, name)
}

// cachedKind completes a Kind with the cache's Lister, and answers the
// optional parts of a Kind whose absence and a neutral answer mean the same
// to the core: no child finished, none updated in place. A Kind that says
// since when its children are ready is wrapped once more
// (cachedSinceKind), since a zero time is no neutral answer.
type cachedKind[C client.Object] struct {
	*Lister[C]
	Kind[C]
}

func (k cachedKind[C]) Finished(child C) bool {
	f, ok := k.Kind.(childset.FinishedKind[C])
	return ok && f.Finished(child)
}

func (k cachedKind[C]) InPlaceUpdate(from, to C) ([]childset.InPlacePatch, bool) {
	if ip, ok := k.Kind.(childset.InPlaceKind[C]); ok {
		return ip.InPlaceUpdate(from, to)
	}
	return nil, false
}

func (k cachedKind[C]) InPlaceDone(child C) bool {
	ip, ok := k.Kind.(childset.InPlaceKind[C])
	return !ok || ip.InPlaceDone(child)
}

// cachedSinceKind is a cachedKind whose user Kind says since when its
// children are ready (childset.ReadySinceKind).
type cachedSinceKind[C client.Object] struct {
	cachedKind[C]
	since childset.ReadySinceKind[C]
}

func (k cachedSinceKind[C]) ReadySince(child C) time.Time { return k.since.ReadySince(child) }

// indexSource registers ControllerField on the child kind when the
// controller starts its event sources, which all start before its first
// reconcile. It delivers no events.
type indexSource[C client.Object] struct {
	indexer client.FieldIndexer
}

func (s indexSource[C]) Start(ctx context.Context, _ Queue) error {
	return AddControllerIndex[C](ctx, s.indexer)
}

func (s indexSource[C]) String() string {
	return fmt.Sprintf("childsetcr: %s on %v", ControllerField, reflect.TypeFor[C]())
}
