package podranking

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
)

// TestNodeRankPaths: ranks read from the slots countOnNodes records (filtered
// pod i is related pod i) must equal ranks looked up by node name, whatever
// the overlap of the two lists.
func TestNodeRankPaths(t *testing.T) {
	pods := genPods(newRand(11), 300, testNow, genConfig{nodes: 20, distinct: true})
	pods[7] = nil
	pods[9].Status.Phase = v1.PodSucceeded // inactive: not counted, still ranked
	reversed := slices.Clone(pods)
	slices.Reverse(reversed)
	tests := []struct {
		name    string
		related []*v1.Pod
	}{
		{"same slice", pods},
		{"copy", slices.Clone(pods)},
		{"reversed", reversed},
		{"prefix", pods[:100]},
		{"superset", append(slices.Clone(pods), genPods(newRand(12), 50, testNow, genConfig{nodes: 20, distinct: true})...)},
		{"none", nil},
	}
	sel := NewSelector(WithNow(testNow))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := RankByRelatedPodsOnSameNode(pods, tt.related)
			sc := sel.acquire()
			sc.countOnNodes(tt.related, pods)
			got := make([]int, len(pods))
			for i, p := range pods {
				if p != nil {
					got[i] = sc.rankOnNode(i, p)
				}
			}
			sel.release(sc)
			require.Len(t, want.Rank, len(pods))
			assert.Equal(t, want.Rank, got)
			want.Now.Time = testNow
			assert.Equal(t, want.Select(40), sel.PodsToDelete(pods, tt.related, 40))
		})
	}
}
