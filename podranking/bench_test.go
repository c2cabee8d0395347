package podranking

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/internal/benchpair"
	"github.com/ctrlkit/ctrlkit/internal/rolloutshape"
)

// benchPods builds n pods shaped like a large ReplicaSet at scale-down
// time: whole-second API timestamps over the last month, most pods running
// and ready on one of n/20 nodes, a few pending or not ready, some restarts,
// one in ten with a deletion cost.
func benchPods(n int, now time.Time) []*v1.Pod {
	now = now.Truncate(time.Second)
	r := rand.New(rand.NewPCG(42, uint64(n)))
	nodes := max(10, n/20)
	pods := make([]*v1.Pod, n)
	for i := range pods {
		created := now.Add(-time.Duration(r.Int64N(30*24*3600)) * time.Second)
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: "pod-" + strconv.Itoa(i), Namespace: "default",
				UID:               types.UID(fmt.Sprintf("%08x-%08x", r.Uint32(), i)),
				CreationTimestamp: metav1.NewTime(created),
			},
			Spec:   v1.PodSpec{NodeName: "node-" + strconv.Itoa(r.IntN(nodes))},
			Status: v1.PodStatus{Phase: v1.PodRunning},
		}
		switch k := r.IntN(100); {
		case k < 3:
			p.Spec.NodeName = ""
			p.Status.Phase = v1.PodPending
		case k < 8:
			p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: metav1.NewTime(created)}}
		default:
			ready := created.Add(time.Duration(1+r.IntN(60)) * time.Second)
			p.Status.Conditions = []v1.PodCondition{
				{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(created)},
				{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready)},
			}
		}
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app", RestartCount: int32(r.IntN(10) / 8)}}
		if r.IntN(10) == 0 {
			p.Annotations = map[string]string{DeletionCostAnnotation: strconv.Itoa(r.IntN(100) - 50)}
		}
		pods[i] = p
	}
	return pods
}

var benchSink []*v1.Pod

// BenchmarkPodsToDelete is the scale-down choice of a ReplicaSet without
// siblings (its pods are its related pods) deleting 5% of its pods.
func BenchmarkPodsToDelete(b *testing.B) {
	now := time.Now()
	for _, n := range []int{1_000, 10_000} {
		pods := benchPods(n, now)
		diff := n / 20
		sel := NewSelector(WithNow(now))
		b.Run(fmt.Sprintf("N=%d/diff=%d", n, diff), func(b *testing.B) {
			b.ReportAllocs()
			start := benchpair.CPUTime()
			for b.Loop() {
				benchSink = sel.PodsToDelete(pods, pods, diff)
			}
			b.ReportMetric(float64(benchpair.CPUTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkRolloutShape is the scale-down choice of a ReplicaSet in the
// middle of a rollout (see rolloutshape.Pods): its related pods hold a
// sibling's too, in listing order. Each call is made fresh, as a user makes
// it, with the package-level PodsToDelete.
func BenchmarkRolloutShape(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		pods, related := rolloutshape.Pods(n, time.Now())
		diff := n / 20
		b.Run(fmt.Sprintf("N=%d/diff=%d", n, diff), func(b *testing.B) {
			b.ReportAllocs()
			start := benchpair.CPUTime()
			for b.Loop() {
				benchSink = PodsToDelete(pods, related, diff)
			}
			b.ReportMetric(float64(benchpair.CPUTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
