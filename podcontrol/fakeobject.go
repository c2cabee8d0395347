package podcontrol

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// FakeObjectControl is an ObjectControl for tests: it records every call and
// writes nothing. Read the fields under the embedded Mutex while calls may
// run concurrently.
type FakeObjectControl[T interface {
	metav1.Object
	runtime.Object
}] struct {
	sync.Mutex

	// Created holds a copy of each created object, with its controller
	// reference set, in call order.
	Created []T
	// Deleted holds "namespace/name" of each delete, in call order.
	Deleted []string
	// Patches holds each patch body, and Patched "namespace/name" of each
	// patched object, in call order.
	Patches [][]byte
	Patched []string

	// Err, when set, is returned by every call after it has been recorded;
	// CreateErr, DeleteErr and PatchErr override it for one operation.
	Err, CreateErr, DeleteErr, PatchErr error
}

var _ ObjectControl[*metav1.PartialObjectMetadata] = (*FakeObjectControl[*metav1.PartialObjectMetadata])(nil)

// Create implements ObjectControl: it validates controllerRef as the real
// control does, records, then returns the recorded copy with CreateErr or Err.
func (f *FakeObjectControl[T]) Create(_ context.Context, namespace string, obj T, _ runtime.Object, controllerRef *metav1.OwnerReference) (T, error) {
	var zero T
	if err := ValidateControllerRef(controllerRef); err != nil {
		return zero, err
	}
	f.Lock()
	defer f.Unlock()
	created := obj.DeepCopyObject().(T)
	created.SetOwnerReferences([]metav1.OwnerReference{*controllerRef.DeepCopy()})
	if created.GetNamespace() == "" {
		created.SetNamespace(namespace)
	}
	f.Created = append(f.Created, created)
	if err := firstErr(f.CreateErr, f.Err); err != nil {
		return zero, err
	}
	return created, nil
}

// Delete implements ObjectControl: it records, then returns DeleteErr or Err.
func (f *FakeObjectControl[T]) Delete(_ context.Context, namespace, name string, _ runtime.Object) error {
	f.Lock()
	defer f.Unlock()
	f.Deleted = append(f.Deleted, namespace+"/"+name)
	return firstErr(f.DeleteErr, f.Err)
}

// Patch implements ObjectControl: it records, then returns PatchErr or Err.
func (f *FakeObjectControl[T]) Patch(_ context.Context, namespace, name string, data []byte) error {
	f.Lock()
	defer f.Unlock()
	f.Patches = append(f.Patches, append([]byte(nil), data...))
	f.Patched = append(f.Patched, namespace+"/"+name)
	return firstErr(f.PatchErr, f.Err)
}
