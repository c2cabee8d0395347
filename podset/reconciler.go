package podset

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/internal/ownermemo"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// Reconciler is podset's core: the set core (childset) specialised to
// pods (podSpec and podKind, pods.go). Its Observe methods turn informer
// events into expectations and the keys of the owners to sync; it holds no
// queue and starts no goroutine. A driver (New's, or ctrlruntime/podsetcr
// under controller-runtime) applies its Results and feeds it events.
type Reconciler[O childset.Object] = childset.Reconciler[O, *v1.Pod]

// Controller is podset's client-go driver: the set core's (childset's),
// over a Reconciler. Build it with New, start the informers, then call Run.
type Controller[O childset.Object] = childset.Controller[O, *v1.Pod]

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
	p, err := newParts(ctx, informerReads[O](podInf.GetIndexer(), ownerInformer.GetIndexer()), kind, podInf, ownerInformer, opts)
	if err != nil {
		return nil, err
	}
	p.cfg.refuseDriverOnly()
	return childset.NewReconciler[O, *v1.Pod](p.spec, p.kind, p.writer, p.cfg.core...), nil
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
	p, err := newParts(ctx, reads, kind, nil, nil, opts)
	if err != nil {
		return nil, err
	}
	p.cfg.refuseDriverOnly()
	return childset.NewReconciler[O, *v1.Pod](p.spec, p.kind, p.writer, p.cfg.core...), nil
}

// parts is what the set core is specialised to pods with: podSpec and
// podKind, the pod writer, and the core's options, the guard and the owner
// lister included.
type parts[O childset.Object] struct {
	spec   podSpec[O]
	kind   podKind
	writer objectcontrol.Interface[*v1.Pod]
	cfg    *config
}

// newParts checks opts and builds the pod parts over reads. With informers
// (podInf and ownerInf not nil) and without WithReadYourWrites, the guard
// watches their stores, as upstream's.
func newParts[O childset.Object](ctx context.Context, reads Reads[O], kind Kind[O], podInf, ownerInf cache.SharedIndexInformer, opts []Option) (parts[O], error) {
	cfg := newConfig(opts)
	switch {
	case cfg.podControl == nil && cfg.podWriter == nil:
		panic("podset: NewReconciler: no pod writer; give WithPodWriter or WithPodControl")
	case !cfg.recorderSet:
		panic("podset: NewReconciler: no event recorder; give WithEventRecorder")
	case cfg.readYourWritesTTL > 0 && cfg.guardSet:
		panic("podset: NewReconciler: WithReadYourWritesTTL sets the TTL of the guard podset builds, and WithReadYourWrites replaced it; give the TTL to consistency.NewGuard")
	}
	gvk := kind.GroupVersionKind()
	if gvk.Kind == "" {
		return parts[O]{}, errors.New("podset: the kind has an empty GroupVersionKind")
	}
	logger := klog.FromContext(ctx)
	guard := cfg.guard
	if !cfg.guardSet && podInf != nil {
		// The guard keys stores and names them in its errors by resource;
		// the guessed plural is right for every usual kind name.
		ownerGVR, _ := meta.UnsafeGuessKindToResource(gvk)
		guard = newGuard(cfg, logger, podInf, ownerInf, ownerGVR.GroupResource())
	}
	var writer objectcontrol.Interface[*v1.Pod]
	if cfg.podControl != nil {
		w, err := newPodControlWriter(cfg.podControl)
		if err != nil {
			return parts[O]{}, err
		}
		writer = w
	} else {
		// Upstream's pod control: its events, checks and patch format.
		writer = objectcontrol.New("pod", cfg.podWriter, cfg.recorder, types.StrategicMergePatchType,
			objectcontrol.WithWriteTimeout(cfg.writeTimeout))
	}
	cfg.core = append([]childset.Option{childset.WithReadYourWrites(guard), childset.WithOwnerLister(reads.Owners)}, cfg.core...)
	p := parts[O]{kind: podKind{reads.Pods}, writer: writer, cfg: &cfg}
	p.spec = podSpec[O]{kind: kind, gvk: gvk, cfg: &cfg, logger: logger, podsMatching: reads.PodsMatching,
		rankings: &ownermemo.Store[*ownerRanking]{}, built: &ownermemo.Store[*builtPod]{}}
	p.spec.siblings, _ = kind.(SiblingLister[O])
	p.spec.scaleIn, _ = kind.(ScaleInKind[O])
	return p, nil
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
	opts := []consistency.Option{consistency.WithClock(cfg.clock), consistency.WithLogger(logger)}
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
