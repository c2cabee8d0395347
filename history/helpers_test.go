package history

import (
	"slices"
	"sort" //nolint:depguard // the ReplicaSet orders are sort.Interface values; they are used through sort.Sort
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func rsOf(name string, replicas *int32, created time.Time) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)},
		Spec: appsv1.ReplicaSetSpec{Replicas: replicas}}
}

func TestFilterReplicaSets(t *testing.T) {
	t0 := time.Now()
	a, b, c := rsOf("a", ptr[int32](0), t0), rsOf("b", ptr[int32](2), t0), rsOf("c", nil, t0)
	assert.Equal(t, []*appsv1.ReplicaSet{b, c}, FilterActiveReplicaSets([]*appsv1.ReplicaSet{a, nil, b, c}),
		"nil entries are dropped; nil replicas is the default 1")
	assert.Nil(t, FilterActiveReplicaSets([]*appsv1.ReplicaSet{a}))
	assert.Equal(t, []*appsv1.ReplicaSet{a}, FilterReplicaSets([]*appsv1.ReplicaSet{a, b}, func(rs *appsv1.ReplicaSet) bool { return rs.Name == "a" }))
}

func TestReplicaSetOrders(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	old3 := rsOf("old3", ptr[int32](3), t0)
	new3 := rsOf("new3", ptr[int32](3), t0.Add(time.Second))
	tieA := rsOf("a", ptr[int32](1), t0)
	tieB := rsOf("b", ptr[int32](1), t0)
	dflt := rsOf("dflt", nil, t0.Add(time.Hour)) // counts as 1
	in := []*appsv1.ReplicaSet{tieB, new3, nil, dflt, old3, tieA}

	byTime := slices.Clone(in)
	sort.Sort(ReplicaSetsByCreationTimestamp(byTime))
	assert.Equal(t, []*appsv1.ReplicaSet{tieA, tieB, old3, new3, dflt, nil}, byTime)

	older := slices.Clone(in)
	sort.Sort(ReplicaSetsBySizeOlder(older))
	assert.Equal(t, []*appsv1.ReplicaSet{old3, new3, tieA, tieB, dflt, nil}, older)

	newer := slices.Clone(in)
	sort.Sort(ReplicaSetsBySizeNewer(newer))
	assert.Equal(t, []*appsv1.ReplicaSet{new3, old3, dflt, tieB, tieA, nil}, newer)

	viaFunc := slices.Clone(in)
	slices.SortFunc(viaFunc, CompareBySizeNewer)
	assert.Equal(t, newer, viaFunc)
}

func TestLabelHelpers(t *testing.T) {
	orig := map[string]string{"a": "1"}
	got := CloneAndAddLabel(orig, "h", "x")
	assert.Equal(t, map[string]string{"a": "1", "h": "x"}, got)
	assert.Equal(t, map[string]string{"a": "1"}, orig)
	got["z"] = "z"
	assert.NotContains(t, orig, "z")
	assert.Equal(t, map[string]string{"h": "x"}, CloneAndAddLabel(nil, "h", "x"))
	same := CloneAndAddLabel(orig, "", "x")
	same["w"] = "w"
	assert.Contains(t, orig, "w", "an empty key returns the map itself")
	delete(orig, "w")

	assert.Equal(t, map[string]string{}, CloneAndRemoveLabel(orig, "a"))
	assert.Equal(t, map[string]string{"a": "1"}, orig)
	assert.Equal(t, map[string]string{"k": "v"}, AddLabel(nil, "k", "v"))
	assert.Nil(t, AddLabel(nil, "", "v"))

	sel := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
		{Key: "x", Operator: metav1.LabelSelectorOpExists},
	}}
	cl := CloneSelectorAndAddLabel(sel, "h", "x")
	assert.Equal(t, map[string]string{"h": "x"}, cl.MatchLabels)
	assert.Nil(t, sel.MatchLabels, "the original is untouched")
	cl.MatchExpressions[0].Values[0] = "changed"
	assert.Equal(t, "a", sel.MatchExpressions[0].Values[0], "values are deep-copied")
	assert.Nil(t, cl.MatchExpressions[1].Values)
	assert.Same(t, sel, CloneSelectorAndAddLabel(sel, "", "x"))
	assert.Equal(t, &metav1.LabelSelector{MatchLabels: map[string]string{"h": "x"}}, CloneSelectorAndAddLabel(nil, "h", "x"))
	assert.Nil(t, CloneSelectorAndAddLabel(&metav1.LabelSelector{}, "h", "x").MatchExpressions)

	assert.Same(t, sel, AddLabelToSelector(sel, "h", "y"))
	assert.Equal(t, "y", sel.MatchLabels["h"])
	assert.True(t, SelectorHasLabel(sel, "h"))
	assert.False(t, SelectorHasLabel(sel, "nope"))
	assert.False(t, SelectorHasLabel(nil, "h"))
	assert.Nil(t, AddLabelToSelector(nil, "h", "y"))
}
