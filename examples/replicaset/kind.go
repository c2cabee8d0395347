package replicaset

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/status"
)

var errNilSelector = errors.New("selector is empty")

// ownerKind is the per-kind plumbing, written once over the API type T
// (*appsv1.ReplicaSet or *v1.ReplicationController). Everything that depends
// on T is a function field filled by newReplicaSetKind or
// newReplicationControllerKind; the methods below are the kind-neutral part.
type ownerKind[T apiObject] struct {
	gvk       schema.GroupVersionKind
	queueName string
	component string
	informer  cache.SharedIndexInformer

	wrap        func(T) owner
	cached      func(namespace, name string) (T, error)
	matching    func(pod *v1.Pod) ([]T, error)
	apiGet      func(ctx context.Context, namespace, name string) (T, error)
	writeStatus func(ctx context.Context, obj T, active, terminating []*v1.Pod, manageErr error, now time.Time) (T, error)
}

// apiObject is a pointer to an API type. Being comparable lets the kind
// spot a typed nil pointer, which a plain type assertion lets through.
type apiObject interface {
	comparable
	runtime.Object
}

// kind is what the core sees of an ownerKind, free of its type parameter so
// that one non-generic Controller serves both kinds.
type kind interface {
	groupVersionKind() schema.GroupVersionKind
	names() (queue, component string)
	ownerInformer() cache.SharedIndexInformer
	// get reads the owner from the informer cache.
	get(namespace, name string) (owner, error)
	// selecting lists the cached owners whose selector matches the pod.
	selecting(pod *v1.Pod) []owner
	// fromObject unwraps an informer object of this kind; ok is false for
	// anything else, nil included.
	fromObject(obj any) (owner, bool)
	// sameController lists cached owners controlled by the same controller as
	// o (o included), through the owner informer's controller-UID index.
	sameController(o owner) ([]owner, error)
	// fetch reads the owner from the API server, bypassing the cache.
	fetch(ctx context.Context, namespace, name string) (owner, error)
	// updateStatus computes and writes the status, returning what was stored.
	updateStatus(ctx context.Context, o owner, active, terminating []*v1.Pod, manageErr error, now time.Time) (owner, error)
}

func (k *ownerKind[T]) groupVersionKind() schema.GroupVersionKind { return k.gvk }
func (k *ownerKind[T]) names() (string, string)                   { return k.queueName, k.component }
func (k *ownerKind[T]) ownerInformer() cache.SharedIndexInformer  { return k.informer }

func (k *ownerKind[T]) fromObject(obj any) (owner, bool) {
	t, ok := obj.(T)
	if !ok || t == *new(T) {
		return nil, false
	}
	return k.wrap(t), true
}

func (k *ownerKind[T]) get(namespace, name string) (owner, error) {
	t, err := k.cached(namespace, name)
	if err != nil {
		return nil, err
	}
	return k.wrap(t), nil
}

// selecting ignores lister errors: the listers report "no match" and
// "pod has no labels" as errors, and both simply mean nobody to wake.
func (k *ownerKind[T]) selecting(pod *v1.Pod) []owner {
	ts, err := k.matching(pod)
	if err != nil {
		return nil
	}
	return k.wrapAll(ts)
}

func (k *ownerKind[T]) sameController(o owner) ([]owner, error) {
	ref := metav1.GetControllerOfNoCopy(o)
	if ref == nil {
		return nil, fmt.Errorf("%s %s/%s has no controller", k.gvk.Kind, o.GetNamespace(), o.GetName())
	}
	objs, err := k.informer.GetIndexer().ByIndex(ownerControllerUIDIndex, string(ref.UID))
	if err != nil {
		return nil, fmt.Errorf("listing %ss controlled by %s: %w", k.gvk.Kind, ref.UID, err)
	}
	out := make([]owner, 0, len(objs))
	for _, obj := range objs {
		if w, ok := k.fromObject(obj); ok {
			out = append(out, w)
		}
	}
	return out, nil
}

func (k *ownerKind[T]) fetch(ctx context.Context, namespace, name string) (owner, error) {
	t, err := k.apiGet(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return k.wrap(t), nil
}

func (k *ownerKind[T]) updateStatus(ctx context.Context, o owner, active, terminating []*v1.Pod, manageErr error, now time.Time) (owner, error) {
	t, ok := o.object().(T)
	if !ok {
		return nil, fmt.Errorf("status update: %T is not a %s", o.object(), k.gvk.Kind)
	}
	updated, err := k.writeStatus(ctx, t, active, terminating, manageErr, now)
	if err != nil {
		return nil, err
	}
	return k.wrap(updated), nil
}

func (k *ownerKind[T]) wrapAll(ts []T) []owner {
	out := make([]owner, 0, len(ts))
	for _, t := range ts {
		if t != *new(T) {
			out = append(out, k.wrap(t))
		}
	}
	return out
}

// newReplicaSetKind is the apps/v1 ReplicaSet kind, named like upstream's
// ReplicaSet controller.
func newReplicaSetKind(client kubernetes.Interface, inf appsinformers.ReplicaSetInformer) kind {
	lister := inf.Lister()
	return &ownerKind[*appsv1.ReplicaSet]{
		gvk:       appsv1.SchemeGroupVersion.WithKind("ReplicaSet"),
		queueName: "replicaset",
		component: "replicaset-controller",
		informer:  inf.Informer(),
		wrap:      func(rs *appsv1.ReplicaSet) owner { return replicaSet{rs} },
		cached: func(namespace, name string) (*appsv1.ReplicaSet, error) {
			return lister.ReplicaSets(namespace).Get(name)
		},
		matching: lister.GetPodReplicaSets,
		apiGet: func(ctx context.Context, namespace, name string) (*appsv1.ReplicaSet, error) {
			return client.AppsV1().ReplicaSets(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		writeStatus: func(ctx context.Context, rs *appsv1.ReplicaSet, active, terminating []*v1.Pod, manageErr error, now time.Time) (*appsv1.ReplicaSet, error) {
			// No DeepCopy of the cached object, unlike upstream: the status
			// package never writes to its input (it computes copy-on-write
			// and updates through its own copy), and in the steady state
			// copying a whole ReplicaSet per sync bought nothing.
			st := status.CalculateReplicaSetStatus(rs, active, terminating, manageErr, now, status.WithTerminatingReplicas())
			return status.UpdateReplicaSetStatus(ctx, client.AppsV1().ReplicaSets(rs.Namespace), rs, st)
		},
	}
}

// newReplicationControllerKind is the core/v1 ReplicationController kind,
// named like upstream's ReplicationManager. Its status has no
// terminatingReplicas, so terminating pods are not passed on.
func newReplicationControllerKind(client kubernetes.Interface, inf coreinformers.ReplicationControllerInformer) kind {
	lister := inf.Lister()
	return &ownerKind[*v1.ReplicationController]{
		gvk:       v1.SchemeGroupVersion.WithKind("ReplicationController"),
		queueName: "replicationmanager",
		component: "replication-controller",
		informer:  inf.Informer(),
		wrap:      func(rc *v1.ReplicationController) owner { return replicationController{rc} },
		cached: func(namespace, name string) (*v1.ReplicationController, error) {
			return lister.ReplicationControllers(namespace).Get(name)
		},
		matching: lister.GetPodControllers,
		apiGet: func(ctx context.Context, namespace, name string) (*v1.ReplicationController, error) {
			return client.CoreV1().ReplicationControllers(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		writeStatus: func(ctx context.Context, rc *v1.ReplicationController, active, _ []*v1.Pod, manageErr error, now time.Time) (*v1.ReplicationController, error) {
			// No DeepCopy: see the ReplicaSet kind.
			st := status.CalculateReplicationControllerStatus(rc, active, manageErr, now)
			return status.UpdateReplicationControllerStatus(ctx, client.CoreV1().ReplicationControllers(rc.Namespace), rc, st)
		},
	}
}
