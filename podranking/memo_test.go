package podranking

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestMemoRanksAsWithout ranks sets of pods again and again through one
// Memo, replacing, adding and dropping pods between rankings (as an
// informer replaces changed objects), with inactive related pods, related
// pods listed in any order, under every policy, and checks each choice and
// order against a ranking without a memo.
func TestMemoRanksAsWithout(t *testing.T) {
	policies := [][]Option{
		nil,
		{WithoutDeletionCost()},
		{WithoutLogarithmicScaleDown()},
		{WithConsistentTies()},
	}
	configs := []genConfig{
		{nodes: 4, distinct: true},
		{nodes: 20, distinct: false, zeroTimeShare: 5, invalidCosts: true},
		{nodes: 2, distinct: false, zeroTimeShare: 3},
	}
	for pi, opts := range policies {
		for ci, cfg := range configs {
			r := newRand(uint64(pi*10 + ci))
			sel := NewSelector(append([]Option{WithNow(testNow)}, opts...)...)
			memo := NewMemo()
			pods := genPods(r, 120, testNow, cfg)
			others := genPods(r, 40, testNow, cfg)
			for round := range 40 {
				for range r.IntN(6) {
					i := r.IntN(len(pods))
					switch r.IntN(4) {
					case 0:
						pods = slices.Delete(pods, i, i+1)
					default:
						pods[i] = genPods(r, 1, testNow, cfg)[0]
					}
				}
				for range r.IntN(4) {
					p := genPods(r, 1, testNow, cfg)[0]
					switch r.IntN(3) {
					case 0:
						p.Status.Phase = v1.PodSucceeded
					case 1:
						p.DeletionTimestamp = &metav1.Time{Time: testNow}
					}
					others = append(others, p)
				}
				if r.IntN(8) == 0 {
					pods = append(pods, nil)
				}
				var related []*v1.Pod
				switch round % 3 {
				case 0: // the pods first, in the same array, as a set ranked among itself
					related = make([]*v1.Pod, 0, len(pods)+len(others))
					related = append(related, pods...)
					related = append(related, others...)
					pods = related[:len(pods)]
				case 1: // shuffled together
					related = append(slices.Clone(pods), others...)
					r.Shuffle(len(related), func(i, j int) { related[i], related[j] = related[j], related[i] })
				default: // the others only
					related = slices.Clone(others)
				}
				for _, diff := range []int{1, len(pods) / 10, len(pods) / 2} {
					want := sel.PodsToDelete(pods, related, diff)
					got := sel.PodsToDeleteMemo(memo, pods, related, diff)
					require.Equal(t, names(want), names(got), "policy %d config %d round %d diff %d", pi, ci, round, diff)
				}
				require.Equal(t, names(sel.Order(pods, related)), names(sel.RankMemo(memo, pods, related).Order()),
					"policy %d config %d round %d", pi, ci, round)
				require.LessOrEqual(t, len(memo.facts), len(pods)+len(related), "the memo holds only pods of the last ranking")
			}
		}
	}
}

// TestKeyFromFactsIsMakeKey: a key made from a pod's facts, as a Memo makes
// it, is the key makeKey makes from the pod, field for field, under every
// policy, on pods with and without monotonic clock readings.
func TestKeyFromFactsIsMakeKey(t *testing.T) {
	configs := []genConfig{
		{nodes: 4, distinct: true},
		{nodes: 20, distinct: false, zeroTimeShare: 5, invalidCosts: true},
		{nodes: 0, distinct: true, sameUIDs: true},
	}
	for ci, cfg := range configs {
		pods := genPods(newRand(uint64(ci)), 300, testNow, cfg)
		// Times from the process's own clock carry monotonic readings.
		pods[0].CreationTimestamp = metav1.Now()
		for _, disableCost := range []bool{false, true} {
			for _, disableLog := range []bool{false, true} {
				for _, ties := range []bool{false, true} {
					direct := newPolicy(testNow, disableCost, disableLog, ties)
					viaFacts := newPolicy(testNow, disableCost, disableLog, ties)
					for i, p := range pods {
						var want, got key
						direct.makeKey(&want, p, i%7, i)
						var f podFacts
						f.read(p, true)
						viaFacts.keyFromFacts(&got, p, &f, i%7, i)
						// makeKey leaves the UID prefix and the creation
						// time to the first comparison that needs them;
						// facts carry them.
						want.uid()
						got.uid()
						direct.createdOf(&want)
						viaFacts.createdOf(&got)
						require.Equal(t, want, got, "config %d pod %d cost=%v log=%v ties=%v", ci, i, !disableCost, !disableLog, ties)
					}
					require.Equal(t, direct.monotonic, viaFacts.monotonic)
				}
			}
		}
	}
}
