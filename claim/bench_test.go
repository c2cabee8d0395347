package claim

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// BenchmarkClaimPods is the steady state of a sync: every pod already owned
// and matching, so no writes; ns/pod is the per-pod cost of the claim loop.
func BenchmarkClaimPods(b *testing.B) {
	ctx := context.Background()
	c := controller("default", "123", false)
	for _, n := range []int{100, 1000} {
		pods := make([]*v1.Pod, n)
		for i := range pods {
			pods[i] = newPod(fmt.Sprintf("p%d", i), productionLabel, c)
		}
		b.Run(fmt.Sprintf("owned/pods=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			m := NewPodControllerRefManager(&fakePodPatcher{}, c, productionSelector, fakeKind, nil)
			for b.Loop() {
				claimed, err := m.ClaimPods(ctx, pods)
				if err != nil || len(claimed) != n {
					b.Fatalf("claimed %d, err %v", len(claimed), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/pod")
		})
	}
	// A namespace-wide list, as upstream claims from: a tenth of the pods are
	// ours, the rest belong to other controllers and are skipped.
	b.Run("namespace/pods=10000", func(b *testing.B) {
		other := controller("default", "456", false)
		pods := make([]*v1.Pod, 10000)
		for i := range pods {
			owner := other
			if i%10 == 0 {
				owner = c
			}
			pods[i] = newPod(fmt.Sprintf("p%d", i), productionLabel, owner)
		}
		m := NewPodControllerRefManager(&fakePodPatcher{}, c, productionSelector, fakeKind, nil)
		b.ReportAllocs()
		for b.Loop() {
			claimed, err := m.ClaimPods(ctx, pods)
			if err != nil || len(claimed) != 1000 {
				b.Fatalf("claimed %d, err %v", len(claimed), err)
			}
		}
	})
	b.Run("adopt/pods=100", func(b *testing.B) {
		pods := make([]*v1.Pod, 100)
		for i := range pods {
			pods[i] = newPod(fmt.Sprintf("p%d", i), productionLabel, nil)
		}
		b.ReportAllocs()
		for b.Loop() {
			m := NewPodControllerRefManager(&discardPatches{}, c, productionSelector, fakeKind, nil)
			if _, err := m.ClaimPods(ctx, pods); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// discardPatches drops patches, so benchmarks measure the manager rather
// than the fake's recording.
type discardPatches struct{}

func (*discardPatches) PatchPod(context.Context, string, string, []byte) error { return nil }

func BenchmarkGenerateDeleteOwnerRefStrategicMergeBytes(b *testing.B) {
	owners := []types.UID{"5d2a3c7e-7b4c-4d8e-9f3a-1c2b3d4e5f60"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := GenerateDeleteOwnerRefStrategicMergeBytes("0c9e1d2f-3a4b-5c6d-7e8f-9a0b1c2d3e4f", owners, "f"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAdoptPatch(b *testing.B) {
	c := controller("default", "5d2a3c7e-7b4c-4d8e-9f3a-1c2b3d4e5f60", false)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := adoptStrategicMergeBytes(c, fakeKind, types.UID("0c9e1d2f"), nil...); err != nil {
			b.Fatal(err)
		}
	}
}
