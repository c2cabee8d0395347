package podsetcr

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/crclient"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/shardcr"
	"github.com/ctrlkit/ctrlkit/podset"
)

// SetupWithManager adds a podset controller for owners described by d to
// mgr: it checks the description, builds podset's core over the manager's
// cache and registers it with controller-runtime's builder as a plain
// reconcile.Reconciler (Controller), watching the owners and the pods
// through the set core's handlers (childsetcr.NewChildHandler and
// NewOwnerHandler). It contacts no API server. O is the
// owner's Go type: a pointer to a generated type registered in the
// manager's scheme, or *unstructured.Unstructured. d may be nil when
// WithKind gives the Kind. A nil mgr panics.
//
// The pod and owner informers are the manager cache's own; podset adds its
// pod-by-owner index to the pod informer, and no second informer is
// started. Pods are created, adopted and deleted through the manager's
// client (crclient.Writer, podset.WithPodWriter), the one writer podset
// wraps with its events and read-your-writes recording; the owner's status
// goes through the manager's client too. Events go to the manager's
// recorder. The reconciler runs podset.WithWorkers reconciles at once
// unless the controller options say otherwise (WithControllerOptions).
func SetupWithManager[O client.Object](mgr manager.Manager, d Describer[O], opts ...Option) (*Controller[O], error) {
	if mgr == nil {
		panic("podsetcr: SetupWithManager: nil manager")
	}
	b := newConfig(opts)
	kind, err := kindOf[O](b.kind)
	if err != nil {
		return nil, err
	}
	if d == nil && kind == nil {
		return nil, errors.New("podsetcr: SetupWithManager needs a describer or WithKind")
	}
	var pins *shardcr.Pins
	if kind == nil {
		var owners client.Reader = mgr.GetCache()
		if b.sharding != nil {
			// The core sees only the owner incarnation its reconcile was
			// fenced for.
			pins = shardcr.NewPins()
			owners = pins.Reader(owners)
		}
		k, err := NewKind(d, owners, mgr.GetAPIReader(), mgr.GetClient(), mgr.GetScheme())
		if err != nil {
			return nil, err
		}
		kind = k
	}
	gvk := kind.GroupVersionKind()
	owner, err := emptyObject[O](mgr.GetScheme(), gvk)
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
	ownerInf, sharedOwners, err := informerFor(ctx, mgr.GetCache(), owner)
	if err != nil {
		return nil, err
	}
	podInf, sharedPods, err := informerFor(ctx, mgr.GetCache(), &corev1.Pod{})
	if err != nil {
		return nil, err
	}
	// ctrlkit's pod control records core/v1 events with upstream's reasons,
	// so it takes the manager's core/v1 recorder.
	recorder := mgr.GetEventRecorderFor(name) //nolint:staticcheck // the core/v1 recorder, deliberately
	popts := append([]podset.Option{
		podset.WithEventRecorder(recorder),
		podset.WithPodWriter(crclient.NewWriter[*corev1.Pod](mgr.GetClient())),
	}, b.podset...)
	// controller-runtime runs the queue, the workers and the handlers
	// (childsetcr's): the core alone is built.
	coreCtx := klog.NewContext(ctx, mgr.GetLogger().WithValues("controller", name))
	var core *podset.Reconciler[O]
	if sharedOwners != nil && sharedPods != nil {
		// The informers' indexers, and a read-your-writes guard over
		// their stores.
		core, err = podset.NewReconciler(coreCtx, podInformer{sharedPods}, sharedOwners, kind, popts...)
	} else {
		// A cache restricted to namespaces: read through it.
		var reads podset.Reads[O]
		if reads, err = cacheReads[O](ctx, mgr, gvk); err != nil {
			return nil, err
		}
		core, err = podset.NewCore(coreCtx, reads, kind, popts...)
	}
	if err != nil {
		return nil, fmt.Errorf("podsetcr: controller %s: %w", name, err)
	}
	r, err := childsetcr.Register(mgr, core, pins, b.host...)
	if err != nil {
		return nil, fmt.Errorf("podsetcr: registering controller %s: %w", name, err)
	}
	return &Controller[O]{Reconciler: r, name: name, hasSynced: []toolscache.InformerSynced{ownerInf.HasSynced, podInf.HasSynced}}, nil
}
