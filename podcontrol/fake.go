package podcontrol

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// FakePodControl is a PodControl for tests. It records every call and
// writes nothing. The exported fields may be read (and Err, CreateLimit and
// the per-operation errors set) directly while no call is in flight, or under
// the embedded Mutex while calls may run concurrently. It validates the
// controller reference and template like RealPodControl, so a test can't
// pass with input the real one refuses, and never modifies the caller's
// template.
type FakePodControl struct {
	sync.Mutex

	// Templates holds a deep copy of each created pod's template, with
	// GenerateName set to the generateName argument ("" for CreatePods) and
	// Name to the name given to CreatePodWithName, in call order.
	Templates []v1.PodTemplateSpec
	// ControllerRefs holds each create's controller reference, in call order.
	ControllerRefs []metav1.OwnerReference
	// CreateNamespaces holds each create's namespace, in call order.
	CreateNamespaces []string
	// DeletePodName holds the name of each deleted pod, in call order.
	DeletePodName []string
	// DeleteNamespaces holds each delete's namespace, in call order.
	DeleteNamespaces []string
	// Patches holds each patch body, in call order.
	Patches [][]byte
	// PatchedPods holds "namespace/name" of each patched pod, in call order.
	PatchedPods []string

	// Err, when set, is returned by every call after it has been recorded.
	Err error
	// CreateErr, DeleteErr and PatchErr override Err for one operation.
	CreateErr, DeleteErr, PatchErr error

	// CreateLimit > 0 makes every create after the first CreateLimit fail
	// before anything is recorded, as a quota would.
	CreateLimit int
	// CreateCallCount counts create calls, including refused ones.
	CreateCallCount int
}

var (
	_ PodControl      = (*FakePodControl)(nil)
	_ NamedPodCreator = (*FakePodControl)(nil)
)

// CreatePods implements PodControl.
func (f *FakePodControl) CreatePods(ctx context.Context, namespace string, template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference) error {
	return f.CreatePodsWithGenerateName(ctx, namespace, template, object, controllerRef, "")
}

// CreatePodsWithGenerateName implements PodControl. Order: count the call,
// apply CreateLimit, validate (controller reference, template, labels),
// record, then return CreateErr or Err.
func (f *FakePodControl) CreatePodsWithGenerateName(_ context.Context, namespace string, template *v1.PodTemplateSpec, _ runtime.Object, controllerRef *metav1.OwnerReference, generateName string) error {
	return f.create(namespace, template, controllerRef, "", generateName)
}

// CreatePodWithName implements NamedPodCreator, in the same order as
// CreatePodsWithGenerateName.
func (f *FakePodControl) CreatePodWithName(_ context.Context, namespace, name string, template *v1.PodTemplateSpec, _ runtime.Object, controllerRef *metav1.OwnerReference) error {
	return f.create(namespace, template, controllerRef, name, "")
}

func (f *FakePodControl) create(namespace string, template *v1.PodTemplateSpec, controllerRef *metav1.OwnerReference, name, generateName string) error {
	f.Lock()
	defer f.Unlock()
	f.CreateCallCount++
	if f.CreateLimit > 0 && f.CreateCallCount > f.CreateLimit {
		return fmt.Errorf("not creating pod, limit %d already reached (create call %d)", f.CreateLimit, f.CreateCallCount)
	}
	if err := ValidateControllerRef(controllerRef); err != nil {
		return err
	}
	if len(template.Labels) == 0 {
		return ErrNoLabels
	}
	recorded := *template.DeepCopy()
	recorded.Name, recorded.GenerateName = name, generateName
	f.Templates = append(f.Templates, recorded)
	f.ControllerRefs = append(f.ControllerRefs, *controllerRef.DeepCopy())
	f.CreateNamespaces = append(f.CreateNamespaces, namespace)
	return firstErr(f.CreateErr, f.Err)
}

// DeletePod implements PodControl: it records the name, then returns
// DeleteErr or Err.
func (f *FakePodControl) DeletePod(_ context.Context, namespace, podID string, _ runtime.Object) error {
	f.Lock()
	defer f.Unlock()
	f.DeletePodName = append(f.DeletePodName, podID)
	f.DeleteNamespaces = append(f.DeleteNamespaces, namespace)
	return firstErr(f.DeleteErr, f.Err)
}

// PatchPod implements PodControl: it records the patch, then returns
// PatchErr or Err.
func (f *FakePodControl) PatchPod(_ context.Context, namespace, name string, data []byte) error {
	f.Lock()
	defer f.Unlock()
	f.Patches = append(f.Patches, append([]byte(nil), data...))
	f.PatchedPods = append(f.PatchedPods, namespace+"/"+name)
	return firstErr(f.PatchErr, f.Err)
}

// Clear forgets all recorded calls and resets CreateLimit and
// CreateCallCount, as upstream. The injected errors are kept.
func (f *FakePodControl) Clear() {
	f.Lock()
	defer f.Unlock()
	f.Templates = []v1.PodTemplateSpec{}
	f.ControllerRefs = []metav1.OwnerReference{}
	f.CreateNamespaces = []string{}
	f.DeletePodName = []string{}
	f.DeleteNamespaces = []string{}
	f.Patches = [][]byte{}
	f.PatchedPods = []string{}
	f.CreateLimit = 0
	f.CreateCallCount = 0
}

// Counts returns, under the lock, the number of recorded creates, deletes
// and patches; safe to call while other goroutines use the fake.
func (f *FakePodControl) Counts() (creates, deletes, patches int) {
	f.Lock()
	defer f.Unlock()
	return len(f.Templates), len(f.DeletePodName), len(f.Patches)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
