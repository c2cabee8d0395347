package podset

import (
	"context"
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// New returns a controller for owners described by kind: the set core's
// client-go driver (childset.New) over podset's core. It registers its
// event handlers and the pod-by-owner index (childset.AddControllerIndexer)
// on the informers; the caller starts the informers after this call and
// then calls Run. ownerInformer must hold objects of type O. Without
// WithEventRecorder, events go to a broadcaster of the controller's own,
// which Run starts and stops, writing through client.
//
// Run's stops and retries are the driver's (childset.Controller.Run): ctx
// done stops at once, Drain stops gracefully (WithDrainTimeout); an owner
// held by the read-your-writes guard is polled (WithStaleCachePoll), a
// failure to reach the API server backs off no longer than a cap
// (WithUnreachableBackoffCap), and any other failure backs off
// exponentially, as upstream.
func New[O childset.Object](ctx context.Context, client kubernetes.Interface, podInformer coreinformers.PodInformer, ownerInformer cache.SharedIndexInformer, kind Kind[O], opts ...Option) (*Controller[O], error) {
	cfg := newConfig(opts)
	if client == nil && ((cfg.podControl == nil && cfg.podWriter == nil) || !cfg.recorderSet) {
		return nil, errors.New("podset: New needs a client unless WithPodWriter (or WithPodControl) and WithEventRecorder are given")
	}
	gvk := kind.GroupVersionKind()
	if gvk.Kind == "" {
		return nil, errors.New("podset: the kind has an empty GroupVersionKind")
	}
	if !cfg.recorderSet {
		component := cfg.eventSource
		if component == "" {
			component = strings.ToLower(gvk.Kind) + "-controller"
		}
		b := record.NewBroadcaster(record.WithContext(ctx))
		opts = append(opts, WithEventRecorder(b.NewRecorder(scheme.Scheme, v1.EventSource{Component: component})),
			core(childset.WithEventBroadcaster(b, &typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})))
	}
	if cfg.podControl == nil && cfg.podWriter == nil {
		opts = append(opts, WithPodWriter(podcontrol.ClientsetWriter(client)))
	}
	podInf := podInformer.Informer()
	p, err := newParts(ctx, informerReads[O](podInf.GetIndexer(), ownerInformer.GetIndexer()), kind, podInf, ownerInformer, opts)
	if err != nil {
		return nil, err
	}
	c, err := childset.New[O, *v1.Pod](ownerInformer, podInf, p.spec, p.kind, p.writer, p.cfg.core...)
	if err != nil {
		return nil, fmt.Errorf("podset: %w", err)
	}
	return c, nil
}
