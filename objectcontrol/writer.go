package objectcontrol

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Object is what a Control writes: an API object with metadata.
type Object interface {
	metav1.Object
	runtime.Object
}

// Writer is the narrow interface a Control writes objects of kind T
// through: the three API calls, with no events, checks or retries, which
// the Control adds. Create receives the Control's own copy of the object
// and may fill it in; each call returns what the API server returned.
type Writer[T Object] interface {
	Create(ctx context.Context, namespace string, obj T) (T, error)
	Delete(ctx context.Context, namespace, name string) error
	Patch(ctx context.Context, namespace, name string, patchType types.PatchType, data []byte) (T, error)
}

// SubresourceWriter is a Writer that patches subresources too, such as a
// pod's "resize"; TypedWriter's is one. subresource "" is the object.
type SubresourceWriter[T Object] interface {
	Writer[T]
	PatchSubresource(ctx context.Context, namespace, name, subresource string, patchType types.PatchType, data []byte) (T, error)
}

// TypedClient is the part of a client-go typed client for one namespace
// (corev1client.ServiceInterface, corev1client.PodInterface, a generated
// client for a custom resource, ...) that TypedWriter calls.
type TypedClient[T runtime.Object] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
}

// TypedWriter returns a Writer calling clientFor(namespace), for example
//
//	objectcontrol.TypedWriter(func(ns string) objectcontrol.TypedClient[*v1.Service] { return client.CoreV1().Services(ns) })
//
// A nil clientFor panics.
func TypedWriter[T Object](clientFor func(namespace string) TypedClient[T]) Writer[T] {
	if clientFor == nil {
		panic("objectcontrol: TypedWriter: nil clientFor")
	}
	return typedWriter[T]{clientFor: clientFor}
}

type typedWriter[T Object] struct {
	clientFor func(namespace string) TypedClient[T]
}

func (w typedWriter[T]) Create(ctx context.Context, namespace string, obj T) (T, error) {
	return w.clientFor(namespace).Create(ctx, obj, metav1.CreateOptions{})
}

func (w typedWriter[T]) Delete(ctx context.Context, namespace, name string) error {
	return w.clientFor(namespace).Delete(ctx, name, metav1.DeleteOptions{})
}

func (w typedWriter[T]) Patch(ctx context.Context, namespace, name string, patchType types.PatchType, data []byte) (T, error) {
	return w.clientFor(namespace).Patch(ctx, name, patchType, data, metav1.PatchOptions{})
}

func (w typedWriter[T]) PatchSubresource(ctx context.Context, namespace, name, subresource string, patchType types.PatchType, data []byte) (T, error) {
	if subresource == "" {
		return w.Patch(ctx, namespace, name, patchType, data)
	}
	return w.clientFor(namespace).Patch(ctx, name, patchType, data, metav1.PatchOptions{}, subresource)
}
