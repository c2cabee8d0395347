package claim

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// PodPatcher sends a strategic-merge patch to one pod. It is the only pod
// write a ref manager needs; every podcontrol.PodControl satisfies it.
type PodPatcher interface {
	PatchPod(ctx context.Context, namespace, name string, data []byte) error
}

// PodControllerRefManager is the ref manager for pods: an
// ObjectControllerRefManager[*v1.Pod] that patches through a PodPatcher and
// keeps upstream's method names.
type PodControllerRefManager struct {
	ObjectControllerRefManager[*v1.Pod]
}

// NewPodControllerRefManager returns a ref manager for the pods of
// controller (of kind controllerKind) selected by selector. canAdopt, if not
// nil, runs at most once, before the first adoption (typically
// RecheckDeletionTimestamp with a live GET); create a new manager per sync to
// check again. finalizers are added on adoption and removed on release.
func NewPodControllerRefManager(podControl PodPatcher, controller metav1.Object, selector labels.Selector,
	controllerKind schema.GroupVersionKind, canAdopt func(context.Context) error, finalizers ...string) *PodControllerRefManager {
	m := &PodControllerRefManager{}
	m.init(podPatcherAdapter{podControl}, controller, selector, controllerKind, canAdopt, WithFinalizers(finalizers...), WithKind("Pod"))
	return m
}

// ClaimPods adopts matching orphans, releases owned pods that no longer
// match, and returns the pods the controller owns afterwards in input order.
// A pod matches when the selector matches its labels and every filter
// returns true. Errors are aggregated; the pods concerned are left out.
func (m *PodControllerRefManager) ClaimPods(ctx context.Context, pods []*v1.Pod, filters ...func(*v1.Pod) bool) ([]*v1.Pod, error) {
	return m.Claim(ctx, pods, filters...)
}

// ClaimPod is ClaimPods for one pod: it adopts or releases pod as ClaimPods
// would and reports whether the controller owns it afterwards.
func (m *PodControllerRefManager) ClaimPod(ctx context.Context, pod *v1.Pod, filters ...func(*v1.Pod) bool) (bool, error) {
	return m.ClaimOne(ctx, pod, filters...)
}

// AdoptPod patches pod to make the controller its managing owner (with the
// manager's finalizers). It fails without a patch when CanAdopt refuses.
func (m *PodControllerRefManager) AdoptPod(ctx context.Context, pod *v1.Pod) error {
	return m.Adopt(ctx, pod)
}

// ReleasePod patches pod to drop the controller's owner reference and the
// manager's finalizers. NotFound and Invalid errors are ignored.
func (m *PodControllerRefManager) ReleasePod(ctx context.Context, pod *v1.Pod) error {
	return m.Release(ctx, pod)
}

// podPatcherAdapter is the Patcher a PodControllerRefManager writes through.
type podPatcherAdapter struct{ pods PodPatcher }

func (a podPatcherAdapter) Patch(ctx context.Context, namespace, name string, data []byte) error {
	return a.pods.PatchPod(ctx, namespace, name, data)
}
