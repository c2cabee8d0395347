package podstate_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ctrlkit/ctrlkit/podstate"
)

func ExampleIsAvailable() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1"},
		Status: v1.PodStatus{
			Phase: v1.PodRunning,
			Conditions: []v1.PodCondition{{
				Type: v1.PodReady, Status: v1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(now.Add(-30 * time.Second)),
			}},
		},
	}
	fmt.Println(podstate.Key(pod), "active:", podstate.IsActive(pod), "ready:", podstate.IsReady(pod))
	fmt.Println("available with minReadySeconds=30:", podstate.IsAvailable(pod, 30, now))
	fmt.Println("available with minReadySeconds=31:", podstate.IsAvailable(pod, 31, now))
	// Output:
	// default/web-1 active: true ready: true
	// available with minReadySeconds=30: true
	// available with minReadySeconds=31: false
}

func ExampleMaxContainerRestarts() {
	always := v1.ContainerRestartPolicyAlways
	pod := &v1.Pod{
		Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "proxy", RestartPolicy: &always}, {Name: "migrate"}}},
		Status: v1.PodStatus{
			ContainerStatuses:     []v1.ContainerStatus{{Name: "app", RestartCount: 2}},
			InitContainerStatuses: []v1.ContainerStatus{{Name: "proxy", RestartCount: 4}, {Name: "migrate", RestartCount: 9}},
		},
	}
	regular, sidecar := podstate.MaxContainerRestarts(pod)
	fmt.Println(regular, sidecar)
	// Output: 2 4
}

// A pod on a node that stopped answering keeps its phase; the node
// lifecycle controller marks it with NodeUnreachablePodReason.
func ExampleIsPodPhaseTerminal() {
	lost := &v1.Pod{Status: v1.PodStatus{Phase: v1.PodRunning, Reason: podstate.NodeUnreachablePodReason}}
	done := &v1.Pod{Status: v1.PodStatus{Phase: v1.PodSucceeded}}
	for _, pod := range []*v1.Pod{lost, done} {
		fmt.Println(pod.Status.Phase, podstate.IsPodPhaseTerminal(pod.Status.Phase),
			pod.Status.Reason == podstate.NodeUnreachablePodReason)
	}
	// Output:
	// Running false true
	// Succeeded true false
}
