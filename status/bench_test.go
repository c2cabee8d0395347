package status

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func benchPods(n int, now time.Time) []*v1.Pod {
	pods := make([]*v1.Pod, n)
	for i := range pods {
		pods[i] = &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i),
				Labels: map[string]string{"app": "web", "tier": "front", "pod-template-hash": "abc"}},
			Status: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{
				{Type: v1.PodScheduled, Status: v1.ConditionTrue},
				{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Duration(i) * time.Second))},
			}},
		}
	}
	return pods
}

func BenchmarkCountReplicas(b *testing.B) {
	now := time.Now()
	tmpl := map[string]string{"app": "web", "tier": "front"}
	for _, n := range []int{10, 1000} {
		pods := benchPods(n, now)
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = CountReplicas(pods, tmpl, 30, now)
			}
		})
	}
}

// BenchmarkTemplateMatch compares the direct map check with building an
// equality selector per call, as upstream's calculateStatus does per status.
func BenchmarkTemplateMatch(b *testing.B) {
	tmpl := map[string]string{"app": "web", "tier": "front"}
	have := map[string]string{"app": "web", "tier": "front", "pod-template-hash": "abc"}
	b.Run("hasLabels", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = hasLabels(have, tmpl)
		}
	})
	b.Run("selector", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = labels.Set(tmpl).AsSelectorPreValidated().Matches(labels.Set(have))
		}
	})
}

func BenchmarkCalculateReplicaSetStatus(b *testing.B) {
	now := time.Now()
	pods := benchPods(100, now)
	rs := &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](101), MinReadySeconds: 30,
		Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "front"}}}}}
	errBoom := errors.New("boom")
	for _, tc := range []struct {
		name string
		err  error
	}{{"ok", nil}, {"failing", errBoom}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = CalculateReplicaSetStatus(rs, pods, nil, tc.err, now, WithTerminatingReplicas())
			}
		})
	}
}

func BenchmarkSetCondition(b *testing.B) {
	base := []appsv1.ReplicaSetCondition{condImagePullBackOff(), condReplicaFailure()}
	b.Run("unchanged", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			st := appsv1.ReplicaSetStatus{Conditions: base}
			SetCondition(&st, condReplicaFailure())
		}
	})
	b.Run("replace", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			st := appsv1.ReplicaSetStatus{Conditions: base}
			SetCondition(&st, condReplicaFailure2())
		}
	})
}

// BenchmarkUpdateReplicaSetStatus measures the steady-state short-circuit
// (no API call) and a real write through the fake clientset.
func BenchmarkUpdateReplicaSetStatus(b *testing.B) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Generation: 1},
		Status: appsv1.ReplicaSetStatus{Replicas: 3, ObservedGeneration: 1,
			Conditions: []appsv1.ReplicaSetCondition{condReplicaFailure()}}}
	client := fake.NewClientset(rs).AppsV1().ReplicaSets("default")
	ctx := context.Background()
	b.Run("steady", func(b *testing.B) {
		next := *rs.Status.DeepCopy()
		b.ReportAllocs()
		for b.Loop() {
			_, _ = UpdateReplicaSetStatus(ctx, client, rs, next)
		}
	})
	b.Run("write", func(b *testing.B) {
		next := *rs.Status.DeepCopy()
		b.ReportAllocs()
		i := int32(0)
		for b.Loop() {
			i++
			next.Replicas = i
			cur, err := client.Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := UpdateReplicaSetStatus(ctx, client, cur, next); err != nil {
				b.Fatal(err)
			}
		}
	})
}
