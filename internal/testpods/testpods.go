// Package testpods builds the pods the controller tests of several packages
// share: selected by labels, optionally controlled by an owner, and, when
// Running, Ready for a minute on node-1.
package testpods

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// New returns a pod named name in owner's namespace with labels, created an
// hour ago; owned makes owner (of kind gvk) its controller.
func New(name string, owner metav1.Object, gvk schema.GroupVersionKind, phase v1.PodPhase, labels map[string]string, owned bool) *v1.Pod {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			UID: uuid.NewUUID(), Name: name, Namespace: owner.GetNamespace(), Labels: labels, ResourceVersion: "1",
			CreationTimestamp: metav1.NewTime(time.Now().Add(-time.Hour)),
		},
		Status: v1.PodStatus{Phase: phase},
	}
	if phase == v1.PodRunning {
		pod.Spec.NodeName = "node-1"
		pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Minute))}}
	}
	if owned {
		pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, gvk)}
	}
	return pod
}

// NewN returns n pods as New makes them, named prefix0, prefix1, ...
func NewN(n int, prefix string, owner metav1.Object, gvk schema.GroupVersionKind, phase v1.PodPhase, labels map[string]string, owned bool) []*v1.Pod {
	pods := make([]*v1.Pod, n)
	for i := range pods {
		pods[i] = New(fmt.Sprintf("%s%d", prefix, i), owner, gvk, phase, labels, owned)
	}
	return pods
}
