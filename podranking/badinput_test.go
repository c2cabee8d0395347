package podranking

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestBadInput(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	ready := fixture("ready", "n1", v1.PodRunning, true, 0, 0, metav1.NewTime(now.Add(-time.Hour)), metav1.NewTime(now.Add(-2*time.Hour)), nil)
	pending := fixture("pending", "", v1.PodPending, false, 0, 0, metav1.Time{}, metav1.NewTime(now), nil)
	sel := NewSelector(WithNow(now))

	t.Run("nil pods go last in PodsToDelete", func(t *testing.T) {
		pods := []*v1.Pod{nil, ready, nil, pending}
		assert.Equal(t, []*v1.Pod{pending, ready}, sel.PodsToDelete(pods, pods, 2))
		assert.Equal(t, []*v1.Pod{pending, ready, nil}, sel.PodsToDelete(pods, pods, 3), "nil pods keep input order among themselves")
		assert.Equal(t, []*v1.Pod{pending, ready, nil, nil}, sel.Order(pods, []*v1.Pod{nil}))
	})
	t.Run("nil pods beside a pod with a monotonic clock reading", func(t *testing.T) {
		// A time from time.Now makes the time rules read the pods'
		// time.Time values; two nil pods must still be equivalent, not
		// dereferenced.
		live := fixture("live", "n1", v1.PodRunning, false, 0, 0, metav1.Time{}, metav1.NewTime(time.Now()), nil)
		pods := []*v1.Pod{nil, nil, live}
		assert.Equal(t, []*v1.Pod{live}, sel.PodsToDelete(pods, pods, 1))
		assert.Equal(t, []*v1.Pod{live, nil, nil}, sel.Order(pods, pods))
		assert.Equal(t, []*v1.Pod{live, nil}, sel.Rank(pods, pods).PodsToDelete(2))
		assert.Equal(t, []*v1.Pod{live, nil, nil}, ActivePodsWithRanks{Pods: pods, Now: metav1.NewTime(now)}.Sorted())
	})
	t.Run("nil pods in ActivePodsWithRanks", func(t *testing.T) {
		s := ActivePodsWithRanks{Pods: []*v1.Pod{nil, ready, nil}, Rank: []int{0, 0, 0}, Now: metav1.NewTime(now)}
		assert.True(t, s.Less(1, 0))
		assert.False(t, s.Less(0, 1))
		assert.False(t, s.Less(0, 2), "two nil pods are equivalent")
		assert.Equal(t, []*v1.Pod{ready}, s.Select(1))
		d := s.Explain(0, 1)
		assert.Equal(t, RuleNil, d.Rule)
		assert.Equal(t, "<nil>", d.A)
		assert.Equal(t, 1, d.Order)
	})
	t.Run("Rank shorter than Pods reads missing ranks as 0", func(t *testing.T) {
		a := fixture("a", "n1", v1.PodRunning, false, 0, 0, metav1.Time{}, metav1.Time{}, nil)
		b := fixture("b", "n1", v1.PodRunning, false, 0, 0, metav1.Time{}, metav1.Time{}, nil)
		s := ActivePodsWithRanks{Pods: []*v1.Pod{a, b}, Rank: []int{1}, Now: metav1.NewTime(now)}
		assert.True(t, s.Less(0, 1), "rank 1 beats the missing (0) rank")
		assert.Equal(t, []*v1.Pod{a}, s.Select(1))
		assert.Equal(t, []*v1.Pod{a, b}, s.Sorted())
		assert.NotPanics(t, func() { s.Swap(0, 1) })
		s.Rank = nil
		assert.Equal(t, 0, s.Compare(0, 1))
	})
	t.Run("diff values", func(t *testing.T) {
		pods := []*v1.Pod{ready, pending}
		tests := []struct {
			diff int
			want []*v1.Pod
		}{
			{-5, nil}, {0, nil}, {1, []*v1.Pod{pending}}, {2, []*v1.Pod{ready, pending}}, {99, []*v1.Pod{ready, pending}},
		}
		for _, tt := range tests {
			got := PodsToDelete(pods, pods, tt.diff)
			assert.Equal(t, tt.want, got, "diff %d", tt.diff)
			assert.Equal(t, tt.want, ActivePodsWithRanks{Pods: pods, Rank: []int{1, 1}}.Select(tt.diff), "Select diff %d", tt.diff)
		}
		all := PodsToDelete(pods, pods, 2)
		all[0] = nil
		assert.Same(t, ready, pods[0], "the result is a copy, not an alias of the input")
	})
	t.Run("nil and empty inputs", func(t *testing.T) {
		assert.Nil(t, PodsToDelete(nil, nil, 3))
		assert.Nil(t, PodsToDelete([]*v1.Pod{}, nil, 0))
		assert.Nil(t, NewSelector().Order(nil, nil))
		assert.Nil(t, ActivePodsWithRanks{}.Sorted())
		assert.Nil(t, ActivePodsWithRanks{}.Select(1))
		s := RankByRelatedPodsOnSameNode([]*v1.Pod{nil, ready}, []*v1.Pod{nil, ready, ready})
		assert.Equal(t, []int{0, 2}, s.Rank)
		assert.False(t, s.Now.IsZero())
	})
	t.Run("zero Now compares plainly", func(t *testing.T) {
		older := fixture("older", "n", v1.PodRunning, true, 0, 0, metav1.NewTime(now.Add(-8*time.Hour)), metav1.Time{}, nil)
		newer := fixture("newer", "n", v1.PodRunning, true, 0, 0, metav1.NewTime(now.Add(-5*time.Hour)), metav1.Time{}, nil)
		older.UID, newer.UID = "a", "b" // under log scaling (buckets 44 and 44) UID would put older first
		s := ActivePodsWithRanks{Pods: []*v1.Pod{older, newer}, Rank: []int{0, 0}}
		assert.True(t, s.Less(1, 0), "zero Now: more recent first")
		s.Now = metav1.NewTime(now)
		assert.True(t, s.Less(0, 1), "with Now: same bucket, UID decides")
		assert.Equal(t, []*v1.Pod{newer}, NewSelector(WithNow(time.Time{})).PodsToDelete(s.Pods, nil, 1))
		assert.Equal(t, []*v1.Pod{newer}, NewSelector(WithNow(now), WithoutLogarithmicScaleDown()).PodsToDelete(s.Pods, nil, 1))
	})
	t.Run("Selector.Explain with unknown and nil pods", func(t *testing.T) {
		pods := []*v1.Pod{ready}
		d := sel.Explain(pods, pods, pending, ready)
		assert.Equal(t, RuleAssignment, d.Rule)
		assert.True(t, d.AFirst())
		d = sel.Explain(pods, pods, nil, ready)
		assert.Equal(t, RuleNil, d.Rule)
		assert.Len(t, pods, 1, "input not extended")
	})
	t.Run("Rule String out of range", func(t *testing.T) {
		assert.Equal(t, "Rule(99)", Rule(99).String())
		assert.Equal(t, "Rule(-1)", Rule(-1).String())
	})
}
