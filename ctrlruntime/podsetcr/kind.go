package podsetcr

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/crclient"
	"github.com/ctrlkit/ctrlkit/podset"
)

// Describer is what only the author of a custom resource knows about it: the
// spec fields podset acts on and how its counts go into the status. Kind
// adds the reads and the status write over controller-runtime's clients, so
// together they make a podset.Kind. Its methods must be safe for concurrent
// use.
type Describer[O client.Object] interface {
	podset.Spec[O]
	// SetStatus writes what in observed into owner's status. owner is a
	// private copy; Kind compares it with the original and writes it to the
	// status subresource only when it changed.
	SetStatus(owner O, in podset.StatusInput)
}

// Kind is a podset.Kind over controller-runtime: Get reads the manager's
// cache, GetUncached the API server (the manager's API reader), and
// UpdateStatus writes the status subresource through the client. Describer
// supplies the rest.
type Kind[O client.Object] struct {
	Describer[O]

	cached    client.Reader
	uncached  client.Reader
	writer    client.StatusClient
	prototype O // an empty owner, copied for every read
}

var _ podset.Kind[*unstructured.Unstructured] = (*Kind[*unstructured.Unstructured])(nil)

// NewKind returns the Kind of owners described by d, read from cached (the
// manager's cache), re-read from uncached (the manager's API reader) and
// whose status is written through writer (the manager's client). scheme
// makes the empty objects reads decode into; an unstructured O needs no
// registration there.
func NewKind[O client.Object](d Describer[O], cached, uncached client.Reader, writer client.StatusClient, scheme *runtime.Scheme) (*Kind[O], error) {
	gvk := d.GroupVersionKind()
	if gvk.Kind == "" {
		return nil, errors.New("podsetcr: the describer has an empty GroupVersionKind")
	}
	prototype, err := emptyObject[O](scheme, gvk)
	if err != nil {
		return nil, err
	}
	return &Kind[O]{Describer: d, cached: cached, uncached: uncached, writer: writer, prototype: prototype}, nil
}

// ChildrenToDeleteFirst forwards to the Describer when it is a
// podset.ScaleInKind; otherwise it names nothing, and podset syncs as for a
// Kind without it.
func (k *Kind[O]) ChildrenToDeleteFirst(owner O) []string {
	if named, ok := k.Describer.(podset.ScaleInKind[O]); ok {
		return named.ChildrenToDeleteFirst(owner)
	}
	return nil
}

var _ podset.ScaleInKind[*unstructured.Unstructured] = (*Kind[*unstructured.Unstructured])(nil)

// DeletionGate forwards to the Describer when it is a
// childset.DeletionGateSpec; otherwise it has no Label, and podset deletes
// pods at once, as for a Kind without it.
func (k *Kind[O]) DeletionGate(owner O) childset.DeletionGate {
	if g, ok := k.Describer.(childset.DeletionGateSpec[O]); ok {
		return g.DeletionGate(owner)
	}
	return childset.DeletionGate{}
}

var _ childset.DeletionGateSpec[*unstructured.Unstructured] = (*Kind[*unstructured.Unstructured])(nil)

// emptyObject returns an empty O of kind gvk, with its kind set so that
// controller-runtime can route reads of unstructured objects.
func emptyObject[O client.Object](scheme *runtime.Scheme, gvk schema.GroupVersionKind) (O, error) {
	var obj runtime.Object
	if _, ok := any(*new(O)).(*unstructured.Unstructured); ok {
		obj = &unstructured.Unstructured{}
	} else {
		var err error
		if obj, err = scheme.New(gvk); err != nil {
			return *new(O), fmt.Errorf("podsetcr: %s is not in the scheme: %w", gvk, err)
		}
	}
	o, ok := obj.(O)
	if !ok {
		return *new(O), fmt.Errorf("podsetcr: the scheme makes %T for %s, not %T", obj, gvk, *new(O))
	}
	o.GetObjectKind().SetGroupVersionKind(gvk)
	return o, nil
}

func (k *Kind[O]) newObject() O {
	return k.prototype.DeepCopyObject().(O) //nolint:forcetypeassert // a copy has the type of its original
}

// Get reads the owner from the manager's cache. A missing owner gives the
// cache's NotFound error.
func (k *Kind[O]) Get(namespace, name string) (O, error) {
	o := k.newObject()
	// podset reads owners only once the owner informer has synced, so the
	// cache answers from memory and the read never blocks.
	if err := k.cached.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, o); err != nil {
		return *new(O), err
	}
	return o, nil
}

// GetUncached reads the owner from the API server.
func (k *Kind[O]) GetUncached(ctx context.Context, namespace, name string) (O, error) {
	o := k.newObject()
	if err := k.uncached.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, o); err != nil {
		return *new(O), err
	}
	return o, nil
}

// UpdateStatus sets the status on a copy of owner with SetStatus and writes
// it to the status subresource, unless nothing changed. Like upstream's
// ReplicaSet status update, a failed write is retried once, on a fresh read
// from the API server (a conflict is the usual cause).
func (k *Kind[O]) UpdateStatus(ctx context.Context, owner O, in podset.StatusInput) (O, error) {
	updated, err := crclient.UpdateStatus(ctx, k.writer, owner, func(o O) { k.SetStatus(o, in) },
		func(ctx context.Context) (O, error) { return k.GetUncached(ctx, owner.GetNamespace(), owner.GetName()) })
	if err != nil {
		return updated, fmt.Errorf("%s: %w", k.GroupVersionKind().Kind, err)
	}
	return updated, nil
}
