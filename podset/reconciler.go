package podset

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	coreinformers "k8s.io/client-go/informers/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/internal/unsure"
	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// Reconciler is podset's core: Reconcile syncs one owner, and the Observe
// methods turn informer events into expectations and the keys of the
// owners to sync. It holds no queue and starts no goroutine; a driver
// (Controller, or ctrlruntime/podsetcr under controller-runtime) applies
// its Results and feeds it events.
type Reconciler[O metav1.Object] struct {
	kind     Kind[O]
	siblings SiblingLister[O] // nil when kind does not list siblings
	scaleIn  ScaleInKind[O]   // nil when kind names no pods to delete first
	gvk      schema.GroupVersionKind
	cfg      config
	logger   klog.Logger

	podControl   deadlinePodControl // every pod write within the write timeout
	recorder     record.EventRecorder
	expectations expectationsCache
	uidExp       *expectations.UIDTrackingControllerExpectations
	// unsure holds the pod creates and deletes whose outcome is unknown
	// (objectcontrol.OutcomeUnknown) until a sync resolves them.
	unsure  *unsure.Registry[*v1.PodTemplateSpec]
	guard   *consistency.Guard // nil when off (WithReadYourWrites(nil))
	ownerGR schema.GroupResource

	podIndexer   cache.Indexer
	podLister    corelisters.PodLister
	ownerIndexer cache.Indexer
	memos        ownerMemos
}

// podGroupResource names pods to the read-your-writes guard.
var podGroupResource = schema.GroupResource{Resource: "pods"}

// NewReconciler returns the core for owners described by kind, reading pods
// and owners from the informers' caches, for a host that drives it with
// its own queue and handlers. It registers the pod-by-owner index
// (AddPodControllerIndexer) on the pod informer, and no handler; call it
// before the informers start. ownerInformer must hold objects of type O.
//
// The core writes pods through WithPodWriter's writer (or WithPodControl's
// control) and records events to WithEventRecorder's recorder; without
// either, NewReconciler panics. So it does on the options of New's driver
// (WithQueueName, WithEventSource, WithMetricsProvider, WithDrainTimeout,
// WithUnreachableBackoffCap), which configure a queue and workers a host
// replaces with its own: ignoring them would leave the caller believing
// they apply. WithWorkers and WithStaleCachePoll are the host's to apply,
// through Workers and StaleCachePoll. The error is for what the informers
// refuse.
func NewReconciler[O metav1.Object](ctx context.Context, podInformer coreinformers.PodInformer, ownerInformer cache.SharedIndexInformer, kind Kind[O], opts ...Option) (*Reconciler[O], error) {
	var zero O
	if _, ok := any(zero).(runtime.Object); !ok {
		return nil, fmt.Errorf("podset: owner type %T is not a runtime.Object", zero)
	}
	cfg := newConfig(opts)
	switch {
	case cfg.podControl == nil && cfg.podWriter == nil:
		panic("podset: NewReconciler: no pod writer; give WithPodWriter or WithPodControl")
	case !cfg.recorderSet:
		panic("podset: NewReconciler: no event recorder; give WithEventRecorder")
	case cfg.readYourWritesTTL > 0 && !cfg.ownGuard():
		panic("podset: NewReconciler: WithReadYourWritesTTL sets the TTL of the guard podset builds, and WithReadYourWrites replaced it; give the TTL to consistency.NewGuard")
	}
	cfg.RefuseDriverOnly("podset")
	gvk := kind.GroupVersionKind()
	if gvk.Kind == "" {
		return nil, errors.New("podset: the kind has an empty GroupVersionKind")
	}
	// The guard keys stores and names them in its errors by resource; the
	// guessed plural is right for every usual kind name.
	ownerGVR, _ := meta.UnsafeGuessKindToResource(gvk)
	logger := klog.FromContext(ctx)
	c := &Reconciler[O]{
		kind: kind, gvk: gvk, cfg: cfg, logger: logger,
		recorder: cfg.recorder,
		ownerGR:  ownerGVR.GroupResource(),
	}
	c.siblings, _ = kind.(SiblingLister[O])
	c.scaleIn, _ = kind.(ScaleInKind[O])
	podInf := podInformer.Informer()
	c.guard = cfg.guard
	if cfg.ownGuard() {
		c.guard = newGuard(cfg, logger, podInf, ownerInformer, c.ownerGR)
	}
	pc := cfg.podControl
	if pc == nil {
		writer := cfg.podWriter
		if c.guard != nil {
			// The core learns of its own pod writes from the writer it
			// writes through, so the guard sees every one, whoever built
			// the writer.
			writer = childset.RecordingWriter[*v1.Pod]{
				Writer: writer, Guard: c.guard, Resource: podGroupResource,
				Enabled: func() bool { return c.cfg.gates(StaleControllerConsistencyReplicaSet) },
			}
		}
		// The control bounds its writes by the same timeout, which the
		// deadline below already imposes, so it adds no second one.
		pc = podcontrol.NewPodControl(writer, c.recorder, podcontrol.WithWriteTimeout(cfg.writeTimeout))
	}
	// Every pod write of a sync gets the write timeout, and the sync stops
	// waiting for it then even if the pod control ignores its context.
	c.podControl = deadlinePodControl{pc: pc, timeout: cfg.writeTimeout}
	c.uidExp = expectations.NewUIDTrackingControllerExpectations(expectations.NewControllerExpectations(
		expectations.WithClock(cfg.Clock),
		expectations.WithLogger(logger),
	))
	c.expectations = c.uidExp
	c.unsure = unsure.New[*v1.PodTemplateSpec](expectations.ExpectationsTimeout, cfg.Clock)
	if err := AddPodControllerIndexer(podInf); err != nil {
		return nil, fmt.Errorf("podset: %w", err)
	}
	c.podIndexer = podInf.GetIndexer()
	c.podLister = podInformer.Lister()
	c.ownerIndexer = ownerInformer.GetIndexer()
	return c, nil
}

// newGuard builds the read-your-writes guard over the two informer stores,
// those that report the resource version they have applied (client-go v0.36
// on). With neither there is nothing to guard, and nil means no guard: the
// controller then never asks about StaleControllerConsistencyReplicaSet, a
// gate that Kubernetes registries before 1.36 do not know (and a registry
// panics on a name it does not know). Libraries and registry come from the
// same Kubernetes release, so stores that report a version imply a registry
// that knows the gate.
func newGuard(cfg config, logger klog.Logger, podInf, ownerInf cache.SharedIndexInformer, ownerGR schema.GroupResource) *consistency.Guard {
	opts := []consistency.Option{consistency.WithClock(cfg.Clock), consistency.WithLogger(logger)}
	if cfg.readYourWritesTTL > 0 {
		opts = append(opts, consistency.WithTTL(cfg.readYourWritesTTL))
	}
	if s, ok := podInf.GetStore().(consistency.SyncedResourceVersioner); ok {
		opts = append(opts, consistency.WithStore(podGroupResource, s))
	}
	if s, ok := ownerInf.GetStore().(consistency.SyncedResourceVersioner); ok {
		opts = append(opts, consistency.WithStore(ownerGR, s))
	}
	if _, ok := podInf.GetStore().(consistency.SyncedResourceVersioner); !ok {
		if _, ok := ownerInf.GetStore().(consistency.SyncedResourceVersioner); !ok {
			return nil
		}
	}
	return consistency.NewGuard(opts...)
}

// Workers is the number of owners synced at once (WithWorkers), for a host
// that runs its own workers.
func (c *Reconciler[O]) Workers() int { return c.cfg.Workers }

// StaleCachePoll is how soon an owner held by the read-your-writes guard
// is to be looked at again (WithStaleCachePoll), for a host that applies
// Reconcile's results itself.
func (c *Reconciler[O]) StaleCachePoll() time.Duration { return c.cfg.StaleCachePoll }

// Expectations is the core's expectations cache, keyed by
// expectations.OwnerKey. It is exposed for frameworks that observe pod
// events themselves and for tests.
func (c *Reconciler[O]) Expectations() *expectations.UIDTrackingControllerExpectations {
	return c.uidExp
}

// expectationsCache is the part of expectations.UIDTrackingControllerExpectations
// the controller uses; an interface so tests can observe the gate.
type expectationsCache interface {
	SatisfiedExpectations(key string) bool
	DeleteExpectations(key string)
	ExpectCreations(key string, adds int) error
	ExpectDeletions(key string, deletedKeys []string) error
	CreationObserved(key string)
	DeletionObserved(key, deleteKey string)
	LowerExpectations(key string, add, del int)
	GetExpectations(key string) (*expectations.ControlleeExpectations, bool, error)
}
