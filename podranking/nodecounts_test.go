package podranking

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ctrlkit/ctrlkit/internal/rolloutshape"
)

// naiveRelatedCounts is upstream's rule 5 input written plainly: per pod of
// filtered, the active pods of related on its node.
func naiveRelatedCounts(filtered, related []*v1.Pod) []int {
	perNode := map[string]int{}
	for _, p := range related {
		if p != nil && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed && p.DeletionTimestamp == nil {
			perNode[p.Spec.NodeName]++
		}
	}
	out := make([]int, len(filtered))
	for i, p := range filtered {
		if p != nil {
			out[i] = perNode[p.Spec.NodeName]
		}
	}
	return out
}

func countsOf(filtered, related []*v1.Pod) []int {
	slots := make([]int32, len(filtered))
	counts := countOnNodes(filtered, related, func(i int, _ *v1.Pod, slot int32) { slots[i] = slot })
	out := make([]int, len(filtered))
	for i, s := range slots {
		if s >= 0 {
			out[i] = counts[s]
		}
	}
	return out
}

// TestCountOnNodesMatchesNaive checks the node counts on every way related
// can hold filtered's pods: as a prefix, shuffled among others, in part,
// twice, not at all, with nil and inactive pods on both sides.
func TestCountOnNodesMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	mk := func(i int) *v1.Pod {
		if r.IntN(12) == 0 {
			return nil
		}
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p" + strconv.Itoa(i)}, Spec: v1.PodSpec{NodeName: "n" + strconv.Itoa(r.IntN(5))}, Status: v1.PodStatus{Phase: v1.PodRunning}}
		switch r.IntN(8) {
		case 0:
			p.Spec.NodeName = ""
		case 1:
			p.Status.Phase = v1.PodFailed
		case 2:
			p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
		}
		return p
	}
	for c := range 2000 {
		filtered := make([]*v1.Pod, r.IntN(40))
		for i := range filtered {
			filtered[i] = mk(i)
			if i > 0 && r.IntN(10) == 0 {
				filtered[i] = filtered[r.IntN(i)] // the same pod twice
			}
		}
		var related []*v1.Pod
		switch c % 4 {
		case 0: // filtered is a prefix of related, in the same array
			related = make([]*v1.Pod, len(filtered), len(filtered)+20)
			copy(related, filtered)
			filtered = related[:len(filtered)]
		case 1: // none of filtered
		default: // some of filtered, some twice, shuffled
			for _, p := range filtered {
				for range r.IntN(3) {
					related = append(related, p)
				}
			}
		}
		for i := range r.IntN(20) {
			related = append(related, mk(100+i))
		}
		if c%4 != 0 {
			r.Shuffle(len(related), func(i, j int) { related[i], related[j] = related[j], related[i] })
		}
		got, want := countsOf(filtered, related), naiveRelatedCounts(filtered, related)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("case %d: pod %d counts %d, want %d", c, i, got[i], want[i])
			}
		}
	}
}

// TestCountOnNodesRolloutShape checks the counts on the rollout shape, where
// related holds filtered's pods shuffled among a sibling's.
func TestCountOnNodesRolloutShape(t *testing.T) {
	pods, related := rolloutshape.Pods(2000, time.Now())
	got, want := countsOf(pods, related), naiveRelatedCounts(pods, related)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("pod %d counts %d, want %d", i, got[i], want[i])
		}
	}
}
