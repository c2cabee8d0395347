package crclient

import (
	"context"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// Writer is an objectcontrol.Writer over a controller-runtime client: the
// three calls of a pod or object control, and nothing else. Events,
// NotFound handling, event reasons, named creates and deadlines come from
// podcontrol and objectcontrol, which wrap it.
type Writer[T client.Object] struct {
	client client.Client
	kind   reflect.Type // the struct T points to
}

var _ objectcontrol.SubresourceWriter[*corev1.Pod] = (*Writer[*corev1.Pod])(nil)

// NewWriter returns a Writer for objects of type T, a pointer to a typed
// API struct (such as *corev1.Pod) registered in c's scheme. A nil client
// or another T panics.
func NewWriter[T client.Object](c client.Client) *Writer[T] {
	if c == nil {
		panic("crclient: NewWriter: nil client")
	}
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("crclient: NewWriter: %v is not a pointer to an API struct", t))
	}
	return &Writer[T]{client: c, kind: t.Elem()}
}

// empty returns a new T naming namespace/name, for deletes and patches.
func (w *Writer[T]) empty(namespace, name string) T {
	obj := reflect.New(w.kind).Interface().(T)
	obj.SetNamespace(namespace)
	obj.SetName(name)
	return obj
}

// Create creates obj in namespace and returns it filled in by the API
// server. An object naming another namespace is refused: the
// controller-runtime client would create it there.
func (w *Writer[T]) Create(ctx context.Context, namespace string, obj T) (T, error) {
	switch obj.GetNamespace() {
	case "":
		obj.SetNamespace(namespace)
	case namespace:
	default:
		var zero T
		return zero, fmt.Errorf("crclient: creating %q in namespace %q: the object names namespace %q", obj.GetName(), namespace, obj.GetNamespace())
	}
	if err := w.client.Create(ctx, obj); err != nil {
		var zero T
		return zero, err
	}
	return obj, nil
}

// Delete deletes the named object.
func (w *Writer[T]) Delete(ctx context.Context, namespace, name string) error {
	return w.client.Delete(ctx, w.empty(namespace, name))
}

// Patch sends data to the named object and returns it as patched.
func (w *Writer[T]) Patch(ctx context.Context, namespace, name string, patchType types.PatchType, data []byte) (T, error) {
	obj := w.empty(namespace, name)
	if err := w.client.Patch(ctx, obj, client.RawPatch(patchType, data)); err != nil {
		var zero T
		return zero, err
	}
	return obj, nil
}

// PatchSubresource sends data to the named object's subresource ("" for
// the object itself, as Patch) and returns the object as patched: an
// in-place update's write, such as a pod's "resize".
func (w *Writer[T]) PatchSubresource(ctx context.Context, namespace, name, subresource string, patchType types.PatchType, data []byte) (T, error) {
	if subresource == "" {
		return w.Patch(ctx, namespace, name, patchType, data)
	}
	obj := w.empty(namespace, name)
	if err := w.client.SubResource(subresource).Patch(ctx, obj, client.RawPatch(patchType, data)); err != nil {
		var zero T
		return zero, err
	}
	return obj, nil
}
