package podranking

import (
	"sort"
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

// TestEqualInstantCorner pins upstream's cyclic corner: Less reproduces it
// verbatim (and sort.Sort survives it), while the class order resolves it.
func TestEqualInstantCorner(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	a, b, c := cornerPods(now)
	require.Equal(t, logBucket(3*time.Hour), logBucket(4*time.Hour), "fixture must keep both instants in one bucket")

	// Upstream (the literal reference) is cyclic: A < C < B < A.
	ref := refSorter{pods: []*v1.Pod{a, b, c}, rank: []int{0, 0, 0}, now: now}
	assert.True(t, ref.Less(0, 2), "upstream: A before C by UID")
	assert.True(t, ref.Less(2, 1), "upstream: C before B by UID")
	assert.True(t, ref.Less(1, 0), "upstream: B before A by restarts (equal instants fall through)")

	// Less is upstream's relation, cycle included, pair by pair.
	s := ActivePodsWithRanks{Pods: []*v1.Pod{a, b, c}, Rank: []int{0, 0, 0}, Now: metav1.NewTime(now)}
	for _, p := range [][2]int{{0, 2}, {2, 1}, {1, 0}} {
		assert.True(t, s.Less(p[0], p[1]), "Less(%d, %d) as upstream", p[0], p[1])
		assert.False(t, s.Less(p[1], p[0]), "Less(%d, %d) as upstream", p[1], p[0])
		assert.Equal(t, -1, s.Compare(p[0], p[1]))
		assert.Equal(t, -1, s.Explain(p[0], p[1]).Order)
	}
	d := s.Explain(1, 0)
	assert.Equal(t, RuleRestarts, d.Rule)
	assert.Contains(t, d.Note, "same ready instant")
	assert.Contains(t, d.Note, "fell through")
	d = s.Explain(2, 1)
	assert.Equal(t, RuleReadyTime, d.Rule)
	assert.Contains(t, d.Note, `ready instants differ within log2 bucket 43: UID "b-c" vs "c-b" (each pod's own UID)`)

	// sort.Sort on the cyclic relation, from every starting order, returns a
	// permutation of the input and does not panic, as upstream's.
	for _, perm := range [][]*v1.Pod{{a, b, c}, {a, c, b}, {b, a, c}, {b, c, a}, {c, a, b}, {c, b, a}} {
		in := ActivePodsWithRanks{Pods: append([]*v1.Pod(nil), perm...), Rank: []int{0, 0, 0}, Now: s.Now}
		require.NotPanics(t, func() { sort.Sort(in) })
		assert.ElementsMatch(t, perm, in.Pods)
		up := refSorter{pods: append([]*v1.Pod(nil), perm...), rank: []int{0, 0, 0}, now: now}
		sort.Sort(up)
		assert.Equal(t, names(up.pods), names(in.Pods), "same comparisons, same result as upstream's sort")
	}

	// The class order: A and B form one instant class represented by UID
	// "a", C its own class "b-c". The same-instant pair falls through to
	// restarts as upstream (B < A), A < C agrees with upstream, and B < C
	// follows from the classes where upstream's UID comparison says C < B.
	cls := classCompare(s)
	assert.Equal(t, -1, cls(1, 0), "same instant: restarts decide, as upstream")
	assert.Equal(t, -1, cls(0, 2), "A before C, as upstream")
	assert.Equal(t, -1, cls(1, 2), "B before C: class representative \"a\" < \"b-c\"")
	checkStrictWeak(t, 3, cls)
	assert.Equal(t, []*v1.Pod{b, a, c}, s.Sorted())
	assert.Equal(t, []*v1.Pod{b, a}, NewSelector(WithNow(now)).PodsToDelete([]*v1.Pod{a, b, c}, nil, 2))
	d = NewSelector(WithNow(now)).Explain([]*v1.Pod{a, b, c}, nil, b, c)
	assert.Equal(t, RuleReadyTime, d.Rule)
	assert.Equal(t, -1, d.Order)
	assert.Contains(t, d.Note, `ready instants differ within log2 bucket 43: class representative UID "a" vs "b-c" (smallest UID of each pod's instant class)`)

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

// TestSameReadySecond is the common real-cluster case: API timestamps are
// whole seconds, so two pods often become ready in the same second. Like
// upstream, the one that restarted goes first, whatever the UIDs.
func TestSameReadySecond(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	ready := metav1.NewTime(now.Add(-90 * time.Minute))
	created := metav1.NewTime(now.Add(-2 * time.Hour))
	for _, tt := range []struct {
		name       string
		uidCalm    types.UID
		uidRestart types.UID
	}{
		{"restarting pod has the larger UID", "1", "2"},
		{"restarting pod has the smaller UID", "2", "1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calm := fixture("calm", "n", v1.PodRunning, true, 0, 0, ready, created, nil)
			restarting := fixture("restarting", "n", v1.PodRunning, true, 3, 0, ready, created, nil)
			calm.UID, restarting.UID = tt.uidCalm, tt.uidRestart
			pods := []*v1.Pod{calm, restarting}
			s := ActivePodsWithRanks{Pods: pods, Rank: []int{0, 0}, Now: metav1.NewTime(now)}
			ref := refSorter{pods: pods, rank: []int{0, 0}, now: now}
			require.True(t, ref.Less(1, 0), "upstream deletes the restarting pod first")
			assert.True(t, s.Less(1, 0))
			assert.False(t, s.Less(0, 1))
			assert.Equal(t, []*v1.Pod{restarting}, NewSelector(WithNow(now)).PodsToDelete(pods, pods, 1))
			assert.Equal(t, RuleRestarts, s.Explain(0, 1).Rule)
		})
	}
}

// TestEqualInstantCreationCorner covers rule 8: not-ready pods created at the
// same instant fall through (here to the end: equivalent), as upstream.
func TestEqualInstantCreationCorner(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	created := metav1.NewTime(now.Add(-time.Hour))
	p1 := fixture("p1", "n", v1.PodPending, false, 0, 0, metav1.Time{}, created, nil)
	p2 := fixture("p2", "n", v1.PodPending, false, 0, 0, metav1.Time{}, created, nil)
	p3 := fixture("p3", "n", v1.PodPending, false, 0, 0, metav1.Time{}, metav1.NewTime(now.Add(-70*time.Minute)), nil)
	p1.UID, p2.UID, p3.UID = "3", "1", "2"
	s := ActivePodsWithRanks{Pods: []*v1.Pod{p1, p2, p3}, Now: metav1.NewTime(now)}
	ref := refSorter{pods: s.Pods, rank: []int{0, 0, 0}, now: now}
	assert.True(t, s.HasEqualInstantTie())
	assert.Equal(t, 0, s.Compare(0, 1), "same creation instant: equivalent")
	assert.False(t, ref.Less(0, 1) || ref.Less(1, 0), "upstream finds them equivalent too")
	d := s.Explain(0, 1)
	assert.Contains(t, d.String(), "equivalent")
	assert.Contains(t, d.Note, "same creation instant")
	// Upstream: p2 < p3 < p1 by UID, yet p1 ~ p2: not a strict weak order,
	// and Less keeps it. The class order represents {p1, p2} by "1", so both
	// go before p3.
	assert.True(t, ref.Less(2, 0) && ref.Less(1, 2))
	assert.True(t, s.Less(2, 0) && s.Less(1, 2), "Less is upstream's relation")
	assert.Contains(t, s.Explain(2, 0).Note, `creation instants differ within log2 bucket`)
	cls := classCompare(s)
	assert.Equal(t, -1, cls(0, 2))
	assert.Equal(t, -1, cls(1, 2))
	checkStrictWeak(t, 3, cls)
	assert.Equal(t, []*v1.Pod{p1, p2, p3}, s.Sorted())
}

// TestDuplicateUIDClasses covers the one case where two instant classes share
// a representative: duplicate UIDs (upstream's unit tests leave UIDs empty).
// One-pod classes with equal UIDs stay equivalent, as upstream finds them;
// the order stays a strict weak order.
func TestDuplicateUIDClasses(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	created := at(48 * time.Hour)
	x := fixture("x", "n", v1.PodRunning, true, 0, 0, at(3*time.Hour), created, nil)
	x2 := fixture("x2", "n", v1.PodRunning, true, 4, 0, at(3*time.Hour), created, nil)
	y := fixture("y", "n", v1.PodRunning, true, 9, 0, at(210*time.Minute), created, nil)
	z := fixture("z", "n", v1.PodRunning, true, 1, 0, at(4*time.Hour), created, nil)
	// All UIDs empty.
	pair := ActivePodsWithRanks{Pods: []*v1.Pod{y, z}, Now: metav1.NewTime(now)}
	assert.Equal(t, 0, pair.Compare(0, 1), "distinct instants, equal UIDs: equivalent as upstream")
	ref := refSorter{pods: pair.Pods, rank: []int{0, 0}, now: now}
	assert.False(t, ref.Less(0, 1) || ref.Less(1, 0))
	all := ActivePodsWithRanks{Pods: []*v1.Pod{x, x2, y, z}, Now: metav1.NewTime(now)}
	assert.True(t, all.Less(1, 0), "same instant: restarts decide")
	// Upstream's relation: x ~ y ~ x2 (equal UIDs), yet x2 < x.
	assert.Equal(t, 0, all.Compare(0, 2))
	assert.Equal(t, 0, all.Compare(1, 2))
	cls := classCompare(all)
	checkStrictWeak(t, 4, cls)
	assert.Equal(t, -1, cls(1, 0), "same instant: restarts decide")
	assert.Equal(t, 0, cls(2, 3), "one-pod classes with equal UIDs stay equivalent")
}
