package parity

import (
	"fmt"
	"slices"
	"sort" //nolint:depguard // drives upstream's ActivePodsWithRanks through sort.Sort, as upstream does
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	upstream "k8s.io/kubernetes/pkg/controller"

	"github.com/ctrlkit/ctrlkit/internal/rolloutshape"
	"github.com/ctrlkit/ctrlkit/podranking"
)

// BenchmarkRolloutShape compares the scale-down choice of a ReplicaSet in
// the middle of its Deployment's rollout (rolloutshape.Pods: its related
// pods are its own and a sibling's, in listing order), deleting 5% of its
// pods: podranking.PodsToDelete against upstream's getPodsToDelete (rank
// by related pods on the same node, sort.Sort, slice). Each call starts
// from nothing, as a user's does.
func BenchmarkRolloutShape(b *testing.B) {
	impls := implOrder(b)
	for _, n := range []int{1_000, 10_000} {
		pods, related := rolloutshape.Pods(n, time.Now())
		diff := n / 20
		for _, impl := range impls {
			b.Run(fmt.Sprintf("N=%d/diff=%d/impl=%s", n, diff, impl), func(b *testing.B) {
				work := make([]*v1.Pod, n)
				loopWithCPU(b, func() {
					if impl == "ctrlkit" {
						benchSink = podranking.PodsToDelete(pods, related, diff)
					} else {
						copy(work, pods)
						sort.Sort(upstream.ActivePodsWithRanks{Pods: work, Rank: upstreamRelatedRanks(work, related), Now: metav1.Now()})
						benchSink = work[:diff]
					}
				})
			})
		}
	}
}

// TestRolloutShapeAgrees keeps the rollout-shape benchmark honest: both
// sides choose the same pods, and order every pod alike.
func TestRolloutShapeAgrees(t *testing.T) {
	now := time.Now()
	for _, n := range []int{1_000, 10_000} {
		pods, related := rolloutshape.Pods(n, now)
		sel := podranking.NewSelector(podranking.WithNow(now))
		for _, diff := range []int{n / 20, n / 2} {
			if !samePods(sel.PodsToDelete(pods, related, diff), upstreamPodsToDelete(pods, related, diff, now)) {
				t.Fatalf("N=%d, diff %d: ctrlkit and upstream disagree", n, diff)
			}
		}
		full := upstream.ActivePodsWithRanks{Pods: slices.Clone(pods), Rank: upstreamRelatedRanks(pods, related), Now: metav1.NewTime(now)}
		sort.Sort(full)
		if !samePods(sel.Order(pods, related), full.Pods) {
			t.Fatalf("N=%d: full order differs", n)
		}
	}
}
