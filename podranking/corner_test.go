package podranking

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// cornerPods builds the cycle of the package documentation: A and B ready at
// the same instant, C ready at another instant of the same log2 bucket, UIDs
// a < c < b, and B restarting more than A.
func cornerPods(now time.Time) (a, b, c *v1.Pod) {
	same := metav1.NewTime(now.Add(-3 * time.Hour))  // bucket 43
	other := metav1.NewTime(now.Add(-4 * time.Hour)) // bucket 43 as well
	created := metav1.NewTime(now.Add(-24 * time.Hour))
	a = fixture("a", "node", v1.PodRunning, true, 0, 0, same, created, nil)
	b = fixture("b", "node", v1.PodRunning, true, 5, 0, same, created, nil)
	c = fixture("c", "node", v1.PodRunning, true, 0, 0, other, created, nil)
	a.UID, b.UID, c.UID = types.UID("a"), types.UID("c-b"), types.UID("b-c")
	return a, b, c
}

// TestEqualInstantCorner pins upstream's cyclic corner and ctrlkit's
// resolution of it.
func TestEqualInstantCorner(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	a, b, c := cornerPods(now)
	require.Equal(t, logBucket(3*time.Hour), logBucket(4*time.Hour), "fixture must keep both instants in one bucket")

	// Upstream (the literal reference) is cyclic: A < C < B < A.
	ref := refSorter{pods: []*v1.Pod{a, b, c}, rank: []int{0, 0, 0}, now: now}
	assert.True(t, ref.Less(0, 2), "upstream: A before C by UID")
	assert.True(t, ref.Less(2, 1), "upstream: C before B by UID")
	assert.True(t, ref.Less(1, 0), "upstream: B before A by restarts (equal instants fall through)")

	// ctrlkit orders the equal-instant pair by UID: A < C < B, transitively.
	s := ActivePodsWithRanks{Pods: []*v1.Pod{a, b, c}, Rank: []int{0, 0, 0}, Now: metav1.NewTime(now)}
	assert.True(t, s.Less(0, 2))
	assert.True(t, s.Less(2, 1))
	assert.True(t, s.Less(0, 1), "ctrlkit: A before B by UID")
	checkStrictWeak(t, 3, s.Compare)
	assert.Equal(t, []*v1.Pod{a, c, b}, s.Sorted())
	d := s.Explain(0, 1)
	assert.Equal(t, RuleReadyTime, d.Rule)
	assert.Contains(t, d.Note, "equal instants")

	// The predicate flags exactly the sets that contain the equal pair.
	tests := []struct {
		name string
		pods []*v1.Pod
		now  time.Time
		want bool
	}{
		{"all three", []*v1.Pod{a, b, c}, now, true},
		{"the equal pair", []*v1.Pod{a, b}, now, true},
		{"a and c", []*v1.Pod{a, c}, now, false},
		{"b and c", []*v1.Pod{b, c}, now, false},
		{"zero now: plain comparison, no corner", []*v1.Pod{a, b, c}, time.Time{}, false},
		{"nil pods ignored", []*v1.Pod{nil, a, nil, c}, now, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ActivePodsWithRanks{Pods: tt.pods, Now: metav1.NewTime(tt.now)}.HasEqualInstantTie()
			assert.Equal(t, tt.want, got)
		})
	}

	// Ranks separate pods before rule 6, so the equal pair no longer meets.
	assert.False(t, ActivePodsWithRanks{Pods: []*v1.Pod{a, b}, Rank: []int{1, 2}, Now: metav1.NewTime(now)}.HasEqualInstantTie())
	// Log scaling off: no buckets, no corner.
	assert.False(t, ActivePodsWithRanks{Pods: []*v1.Pod{a, b}, Now: metav1.NewTime(now), DisableLogarithmicScaleDown: true}.HasEqualInstantTie())
	// The package-level form ranks by related pods first.
	assert.True(t, HasEqualInstantTie([]*v1.Pod{a, b, c}, []*v1.Pod{a, b, c}, now))
}

// TestEqualInstantCreationCorner covers the same corner on rule 8, for
// not-ready pods created at the same instant.
func TestEqualInstantCreationCorner(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	created := metav1.NewTime(now.Add(-time.Hour))
	p1 := fixture("p1", "n", v1.PodPending, false, 0, 0, metav1.Time{}, created, nil)
	p2 := fixture("p2", "n", v1.PodPending, false, 0, 0, metav1.Time{}, created, nil)
	p1.UID, p2.UID = "2", "1"
	s := ActivePodsWithRanks{Pods: []*v1.Pod{p1, p2}, Now: metav1.NewTime(now)}
	assert.True(t, s.HasEqualInstantTie())
	assert.True(t, s.Less(1, 0), "ordered by UID")
	assert.False(t, refSorter{pods: s.Pods, rank: []int{0, 0}, now: now}.Less(1, 0), "upstream finds them equivalent")
	// Equal UIDs fall through exactly like upstream (here: to the end, equivalent).
	p2.UID = "2"
	assert.Equal(t, 0, s.Compare(0, 1))
	assert.True(t, strings.Contains(s.Explain(0, 1).String(), "equivalent"))
}
