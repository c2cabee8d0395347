package objectcontrol

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Fake is an Interface for tests, as podcontrol.FakePodControl is for pods:
// it records every call and writes nothing. The exported fields may be read
// (and the errors and CreateLimit set) directly while no call is in flight,
// or under the embedded Mutex while calls may run concurrently. It checks a
// controller reference like Control, so a test can't pass with input the
// real one refuses, and never modifies the caller's object.
type Fake[T Object] struct {
	sync.Mutex

	// Created holds a copy of each recorded create's object, its owner
	// references replaced by the controller reference when one was given and
	// its namespace set when empty, in call order.
	Created []T
	// ControllerRefs holds each recorded create's controller reference (nil
	// for a create without one), in call order.
	ControllerRefs []*metav1.OwnerReference
	// CreateNamespaces holds each recorded create's namespace, in call order.
	CreateNamespaces []string
	// Deleted holds "namespace/name" of each delete, in call order.
	Deleted []string
	// Patches holds each patch body, and Patched "namespace/name" of each
	// patched object, in call order.
	Patches [][]byte
	Patched []string

	// Err, when set, is returned by every call after it has been recorded;
	// CreateErr, DeleteErr and PatchErr override it for one operation.
	Err, CreateErr, DeleteErr, PatchErr error

	// CreateLimit > 0 makes every create after the first CreateLimit fail
	// before anything is recorded, as a quota would.
	CreateLimit int
	// CreateCallCount counts create calls, including refused ones.
	CreateCallCount int
}

var _ Interface[*metav1.PartialObjectMetadata] = (*Fake[*metav1.PartialObjectMetadata])(nil)

// Create implements Interface. Order: count the call, apply CreateLimit,
// check controllerRef (nil is allowed, as for Control), record, then return
// the recorded copy with CreateErr or Err.
func (f *Fake[T]) Create(_ context.Context, namespace string, obj T, _ runtime.Object, controllerRef *metav1.OwnerReference) (T, error) {
	var zero T
	f.Lock()
	defer f.Unlock()
	f.CreateCallCount++
	if f.CreateLimit > 0 && f.CreateCallCount > f.CreateLimit {
		return zero, fmt.Errorf("not creating object, limit %d already reached (create call %d)", f.CreateLimit, f.CreateCallCount)
	}
	var ref *metav1.OwnerReference
	if controllerRef != nil {
		if err := ValidateControllerRef(controllerRef); err != nil {
			return zero, err
		}
		ref = controllerRef.DeepCopy()
	}
	created := obj.DeepCopyObject().(T)
	if ref != nil {
		created.SetOwnerReferences([]metav1.OwnerReference{*ref})
	}
	if created.GetNamespace() == "" {
		created.SetNamespace(namespace)
	}
	f.Created = append(f.Created, created)
	f.ControllerRefs = append(f.ControllerRefs, ref)
	f.CreateNamespaces = append(f.CreateNamespaces, namespace)
	if err := firstErr(f.CreateErr, f.Err); err != nil {
		return zero, err
	}
	return created.DeepCopyObject().(T), nil
}

// Delete implements Interface: it records, then returns DeleteErr or Err.
func (f *Fake[T]) Delete(_ context.Context, namespace, name string, _ runtime.Object) error {
	f.Lock()
	defer f.Unlock()
	f.Deleted = append(f.Deleted, namespace+"/"+name)
	return firstErr(f.DeleteErr, f.Err)
}

// Patch implements Interface: it records, then returns PatchErr or Err.
func (f *Fake[T]) Patch(_ context.Context, namespace, name string, data []byte) error {
	f.Lock()
	defer f.Unlock()
	f.Patches = append(f.Patches, append([]byte(nil), data...))
	f.Patched = append(f.Patched, namespace+"/"+name)
	return firstErr(f.PatchErr, f.Err)
}

// Clear forgets all recorded calls and resets CreateLimit and
// CreateCallCount, as podcontrol.FakePodControl.Clear does. The injected
// errors are kept.
func (f *Fake[T]) Clear() {
	f.Lock()
	defer f.Unlock()
	f.Created = []T{}
	f.ControllerRefs = []*metav1.OwnerReference{}
	f.CreateNamespaces = []string{}
	f.Deleted = []string{}
	f.Patches = [][]byte{}
	f.Patched = []string{}
	f.CreateLimit = 0
	f.CreateCallCount = 0
}

// Counts returns, under the lock, the number of recorded creates, deletes
// and patches; safe to call while other goroutines use the fake.
func (f *Fake[T]) Counts() (creates, deletes, patches int) {
	f.Lock()
	defer f.Unlock()
	return len(f.Created), len(f.Deleted), len(f.Patches)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
