package podranking

import (
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSortInterfaceClasses checks that sort.Sort through the sort.Interface,
// which caches the instant classes per slice, yields the key-based order, and
// that the cache notices a slice that was resized, refilled or edited between
// sorts.
func TestSortInterfaceClasses(t *testing.T) {
	now := metav1.NewTime(testNow)
	sortedOK := func(t *testing.T, s ActivePodsWithRanks) {
		t.Helper()
		want := s.Sorted()
		sort.Stable(s)
		require.True(t, sort.IsSorted(s))
		assert.Equal(t, names(want), names(s.Pods), "sort.Stable through Less equals the key-based order")
		checkStrictWeak(t, len(s.Pods), s.Compare)
	}
	tests := []struct {
		name string
		cfg  genConfig
	}{
		{"coarse instants", genConfig{nodes: 2}},
		{"coarse instants, duplicate UIDs", genConfig{nodes: 2, sameUIDs: true}},
		{"distinct instants", genConfig{nodes: 3, distinct: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods := genPods(newRand(42), 60, testNow, tt.cfg)
			s := ActivePodsWithRanks{Pods: pods, Rank: make([]int, len(pods)), Now: now}
			sortedOK(t, s)

			// Same backing array, shorter: a different set.
			short := ActivePodsWithRanks{Pods: pods[:40], Rank: s.Rank[:40], Now: now}
			sortedOK(t, short)

			// Edit pods in place so new equal instants appear, and refill the
			// slice in another order: the fingerprints notice.
			for i := 0; i < len(pods); i += 3 {
				if c := firstReady(pods[i]); c != nil {
					c.LastTransitionTime = metav1.NewTime(testNow.Add(-3 * time.Hour))
				}
			}
			for i, j := 0, len(pods)-1; i < j; i, j = i+1, j-1 {
				pods[i], pods[j] = pods[j], pods[i]
			}
			sortedOK(t, s)
		})
	}
}

// TestSortCacheEviction sorts more sets than the cache holds, interleaving
// their comparisons: each still sees a consistent order.
func TestSortCacheEviction(t *testing.T) {
	sets := make([]ActivePodsWithRanks, lessCacheSlots+4)
	for i := range sets {
		pods := genPods(newRand(uint64(i)), 12, testNow, genConfig{nodes: 1})
		sets[i] = ActivePodsWithRanks{Pods: pods, Rank: make([]int, len(pods)), Now: metav1.NewTime(testNow)}
	}
	for _, s := range sets {
		checkStrictWeak(t, len(s.Pods), s.Compare)
	}
	for _, s := range sets {
		sort.Sort(s)
		assert.True(t, sort.IsSorted(s))
	}
}
