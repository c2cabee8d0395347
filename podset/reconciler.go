package podset

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/internal/ownermemo"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// Reconciler is podset's core: the set core (childset) specialised to
// pods (podSpec and podKind, pods.go), with the Observe methods that turn
// informer events into expectations and the keys of the owners to sync.
// It holds no queue and starts no goroutine; a driver (Controller, or
// ctrlruntime/podsetcr under controller-runtime) applies its Results and
// feeds it events.
type Reconciler[O childset.Object] struct {
	core   *childset.Reconciler[O, *v1.Pod]
	spec   podSpec[O]
	kind   Kind[O]
	gvk    schema.GroupVersionKind
	cfg    *config
	logger klog.Logger
	guard  *consistency.Guard // nil when off (WithReadYourWrites(nil))
}

// podGroupResource names pods to the read-your-writes guard.
var podGroupResource = schema.GroupResource{Resource: "pods"}

// NewReconciler returns the core for owners described by kind, reading pods
// and owners from the informers' caches, for a host that drives it with
// its own queue and handlers. It registers the pod-by-owner index
// (childset.AddControllerIndexer) on the pod informer, and no handler; call
// it before the informers start. ownerInformer must hold objects of type O.
// Without WithReadYourWrites, the core's read-your-writes guard watches the
// two informers' stores.
//
// The core writes pods through WithPodWriter's writer (or WithPodControl's
// control) and records events to WithEventRecorder's recorder; without
// either, NewReconciler panics. So it does on the options of New's driver
// (WithQueueName, WithEventSource, WithMetricsProvider, WithDrainTimeout,
// WithUnreachableBackoffCap), which configure a queue and workers a host
// replaces with its own: ignoring them would leave the caller believing
// they apply. WithWorkers and WithStaleCachePoll are the host's to apply,
// through Workers and StaleCachePoll. The error is for what the informers
// refuse, and for a WithPodControl that cannot create pods by name.
func NewReconciler[O childset.Object](ctx context.Context, podInformer coreinformers.PodInformer, ownerInformer cache.SharedIndexInformer, kind Kind[O], opts ...Option) (*Reconciler[O], error) {
	podInf := podInformer.Informer()
	if err := childset.AddControllerIndexer(podInf); err != nil {
		return nil, fmt.Errorf("podset: %w", err)
	}
	ownGuard := func(cfg config, ownerGR schema.GroupResource) *consistency.Guard {
		return newGuard(cfg, klog.FromContext(ctx), podInf, ownerInformer, ownerGR)
	}
	return newCore(ctx, informerReads[O](podInf.GetIndexer(), ownerInformer.GetIndexer()), kind, ownGuard, opts)
}

// NewCore is NewReconciler for a host that reads pods and owners its own
// way (reads), as ctrlruntime/podsetcr does over a cache restricted to
// namespaces. It has no informer store to watch, so the read-your-writes
// guard is the one WithReadYourWrites gives, if any. A nil field of reads
// panics.
func NewCore[O childset.Object](ctx context.Context, reads Reads[O], kind Kind[O], opts ...Option) (*Reconciler[O], error) {
	if reads.Pods == nil || reads.PodsMatching == nil || reads.Owners == nil {
		panic("podset: NewCore: a nil read")
	}
	return newCore(ctx, reads, kind, nil, opts)
}

// newCore builds the core over reads; ownGuard, when not nil, builds the
// guard podset makes without WithReadYourWrites.
func newCore[O childset.Object](ctx context.Context, reads Reads[O], kind Kind[O], ownGuard func(config, schema.GroupResource) *consistency.Guard, opts []Option) (*Reconciler[O], error) {
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
	logger := klog.FromContext(ctx)
	c := &Reconciler[O]{kind: kind, gvk: gvk, cfg: &cfg, logger: logger, guard: cfg.guard}
	if cfg.ownGuard() && ownGuard != nil {
		// The guard keys stores and names them in its errors by resource;
		// the guessed plural is right for every usual kind name.
		ownerGVR, _ := meta.UnsafeGuessKindToResource(gvk)
		c.guard = ownGuard(cfg, ownerGVR.GroupResource())
	}
	var writer objectcontrol.Interface[*v1.Pod]
	if cfg.podControl != nil {
		w, err := newPodControlWriter(cfg.podControl)
		if err != nil {
			return nil, err
		}
		writer = w
	} else {
		// Upstream's pod control: its events, checks and patch format.
		writer = objectcontrol.New("pod", cfg.podWriter, cfg.recorder, types.StrategicMergePatchType,
			objectcontrol.WithWriteTimeout(cfg.writeTimeout))
	}
	c.spec = podSpec[O]{kind: kind, gvk: gvk, cfg: c.cfg, logger: logger, podsMatching: reads.PodsMatching,
		rankings: &ownermemo.Store[*ownerRanking]{}, built: &ownermemo.Store[*builtPod]{}}
	c.spec.siblings, _ = kind.(SiblingLister[O])
	c.spec.scaleIn, _ = kind.(ScaleInKind[O])
	coreOpts := []childset.Option{
		childset.WithClock(cfg.Clock), childset.WithBurstReplicas(cfg.burst), childset.WithWriteTimeout(cfg.writeTimeout),
		childset.WithEventRecorder(cfg.recorder), childset.WithReadYourWrites(c.guard), childset.WithFeatureGates(cfg.gates),
		childset.WithOwnerLister(reads.Owners),
	}
	if cfg.syncMetrics != nil {
		coreOpts = append(coreOpts, childset.WithSyncMetrics(cfg.syncMetrics))
	}
	if cfg.syncGuard != nil {
		coreOpts = append(coreOpts, childset.WithSyncGuard(cfg.syncGuard))
	}
	c.core = childset.NewReconciler[O, *v1.Pod](c.spec, podKind{reads.Pods}, writer, coreOpts...)
	return c, nil
}

// Reconcile brings one owner, named by its "namespace/name" key, to its
// desired pod count and writes its status: upstream's syncReplicaSet, as
// the set core runs it (childset.Reconciler.Reconcile). It touches no
// queue: the Result says when to look at the owner again (when its unmet
// expectations expire, or when a ready pod becomes available), and
// whoever drives it applies that. It must not run concurrently for the
// same key; a work queue guarantees that.
//
// Every write it makes (pod creations, deletions, adoption and release
// patches, the status update, and the uncached re-read before adopting)
// gets a context deadline of the write timeout (WithWriteTimeout), and
// Reconcile stops waiting for it then even if the writer or Kind ignores
// the context. A creation whose outcome is unknown (no answer by then, a
// 504, a reset connection) keeps its expectation until the pod is observed
// or the create, repeated under the name chosen before it, settles it.
//
// With WithSyncGuard, the whole of it runs under the guard, or not at all.
func (c *Reconciler[O]) Reconcile(ctx context.Context, key string) (childset.Result, error) {
	return c.core.Reconcile(ctx, key)
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
	return c.core.Expectations()
}
