package podstate

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func BenchmarkPredicates(b *testing.B) {
	always := v1.ContainerRestartPolicyAlways
	now := time.Now()
	pod := &v1.Pod{
		Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "proxy", RestartPolicy: &always}}},
		Status: v1.PodStatus{
			Phase: v1.PodRunning,
			Conditions: []v1.PodCondition{
				{Type: v1.PodScheduled, Status: v1.ConditionTrue},
				{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Minute))},
			},
			ContainerStatuses:     []v1.ContainerStatus{{RestartCount: 1}, {RestartCount: 2}},
			InitContainerStatuses: []v1.ContainerStatus{{Name: "proxy", RestartCount: 3}},
		},
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = IsActive(pod) && IsAvailable(pod, 10, now)
		_, _ = MaxContainerRestarts(pod)
	}
}
