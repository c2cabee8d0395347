package childset_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ctrlkit/ctrlkit/childset"
)

// Shorthands for table children: old or updated, available or not,
// being deleted; at an index (indexed mode) or not.
func oldAv() childset.RolloutChild { return childset.RolloutChild{Index: -1, Available: true} }
func oldUn() childset.RolloutChild { return childset.RolloutChild{Index: -1} }
func updAv() childset.RolloutChild {
	return childset.RolloutChild{Index: -1, Updated: true, Available: true}
}
func updUn() childset.RolloutChild { return childset.RolloutChild{Index: -1, Updated: true} }
func beingDeleted(c childset.RolloutChild) childset.RolloutChild {
	c.Deleting = true
	return c
}
func atIndex(i int, c childset.RolloutChild) childset.RolloutChild {
	c.Index = i
	return c
}

func rolloutBounds(surge, unavailable int32) childset.RolloutBounds {
	return childset.RolloutBounds{MaxSurge: surge, MaxUnavailable: unavailable}
}

func TestPlanRolloutInterchangeable(t *testing.T) {
	cases := []struct {
		name      string
		replicas  int32
		bounds    childset.RolloutBounds
		partition int32
		burst     int
		children  []childset.RolloutChild
		want      childset.RolloutPlan
	}{
		{"surge first", 3, rolloutBounds(1, 0), 0, 0,
			[]childset.RolloutChild{oldAv(), oldAv(), oldAv()},
			childset.RolloutPlan{CreateUpdated: 1}},
		{"wait for the surged child", 3, rolloutBounds(1, 0), 0, 0,
			[]childset.RolloutChild{oldAv(), oldAv(), oldAv(), updUn()},
			childset.RolloutPlan{}},
		{"surged child available: delete the first old one", 3, rolloutBounds(1, 0), 0, 0,
			[]childset.RolloutChild{oldAv(), oldAv(), oldAv(), updAv()},
			childset.RolloutPlan{Delete: []int{0}}},
		{"no surge: delete before creating", 3, rolloutBounds(0, 1), 0, 0,
			[]childset.RolloutChild{oldAv(), oldAv(), oldAv()},
			childset.RolloutPlan{Delete: []int{0}}},
		{"a child being deleted takes room", 3, rolloutBounds(0, 1), 0, 0,
			[]childset.RolloutChild{beingDeleted(oldAv()), oldAv(), oldAv()},
			childset.RolloutPlan{}},
		{"its room is free once it is gone", 3, rolloutBounds(0, 1), 0, 0,
			[]childset.RolloutChild{oldAv(), oldAv()},
			childset.RolloutPlan{CreateUpdated: 1}},
		{"unavailable old children go first and cost nothing", 3, rolloutBounds(0, 1), 0, 0,
			[]childset.RolloutChild{oldAv(), oldUn(), oldAv()},
			childset.RolloutPlan{Delete: []int{1}}},
		{"then available ones while the margin lasts", 3, rolloutBounds(0, 2), 0, 0,
			[]childset.RolloutChild{oldAv(), oldUn(), oldAv()},
			childset.RolloutPlan{Delete: []int{1, 0}}},
		{"partition keeps old children", 4, rolloutBounds(1, 1), 3, 0,
			[]childset.RolloutChild{oldAv(), oldAv(), oldAv(), oldAv()},
			childset.RolloutPlan{CreateUpdated: 1, Delete: []int{0}}},
		{"partition reached", 4, rolloutBounds(1, 1), 3, 0,
			[]childset.RolloutChild{oldAv(), oldAv(), oldAv(), updAv()},
			childset.RolloutPlan{}},
		{"a missing child restores the partition", 4, rolloutBounds(1, 1), 2, 0,
			[]childset.RolloutChild{oldAv(), updAv(), updAv()},
			childset.RolloutPlan{CreateCurrent: 1}},
		{"never a rollback", 3, rolloutBounds(1, 1), 2, 0,
			[]childset.RolloutChild{updAv(), updAv(), updAv()},
			childset.RolloutPlan{}},
		{"scale down during a rollout deletes old children", 2, rolloutBounds(1, 1), 0, 0,
			[]childset.RolloutChild{updAv(), oldAv(), updAv(), oldAv()},
			childset.RolloutPlan{Delete: []int{1, 3}}},
		{"scale down under a partition deletes updated children", 3, rolloutBounds(1, 1), 2, 0,
			[]childset.RolloutChild{updAv(), oldAv(), updUn(), oldAv(), updAv()},
			childset.RolloutPlan{Delete: []int{2, 0}}},
		{"zero replicas", 0, rolloutBounds(0, 0), 0, 0,
			[]childset.RolloutChild{updAv(), oldAv()},
			childset.RolloutPlan{Delete: []int{1, 0}}},
		{"burst caps creations", 1000, rolloutBounds(250, 250), 0, 10,
			nil,
			childset.RolloutPlan{CreateUpdated: 10}},
		{"room beyond int32", math.MaxInt32, rolloutBounds(math.MaxInt32, 0), 0, 10,
			nil,
			childset.RolloutPlan{CreateUpdated: 10}},
		{"burst caps deletions, unavailable first", 0, rolloutBounds(0, 0), 0, 2,
			[]childset.RolloutChild{oldAv(), oldUn(), oldAv()},
			childset.RolloutPlan{Delete: []int{1, 0}}},
		{"indices are ignored", 2, rolloutBounds(0, 1), 0, 0,
			[]childset.RolloutChild{atIndex(5, oldAv()), atIndex(0, oldAv())},
			childset.RolloutPlan{Delete: []int{0}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := childset.PlanRollout(childset.RolloutState{
				Replicas: tc.replicas, Bounds: tc.bounds, Partition: tc.partition, Burst: tc.burst, Children: tc.children,
			})
			if !plansEqual(got, tc.want) {
				t.Errorf("PlanRollout = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPlanRolloutIndexed(t *testing.T) {
	cases := []struct {
		name      string
		replicas  int32
		bounds    childset.RolloutBounds
		partition int32
		children  []childset.RolloutChild
		want      childset.RolloutPlan
	}{
		{"highest index first", 3, rolloutBounds(0, 1), 0,
			[]childset.RolloutChild{atIndex(0, oldAv()), atIndex(2, oldAv()), atIndex(1, oldAv())},
			childset.RolloutPlan{Delete: []int{1}}},
		{"the name is held while it is deleted", 3, rolloutBounds(0, 1), 0,
			[]childset.RolloutChild{atIndex(0, oldAv()), atIndex(2, beingDeleted(oldAv())), atIndex(1, oldAv())},
			childset.RolloutPlan{}},
		{"created again at the update revision once gone", 3, rolloutBounds(0, 1), 0,
			[]childset.RolloutChild{atIndex(0, oldAv()), atIndex(1, oldAv())},
			childset.RolloutPlan{CreateUpdatedIndices: []int{2}}},
		{"next index once the new child is available", 3, rolloutBounds(0, 1), 0,
			[]childset.RolloutChild{atIndex(0, oldAv()), atIndex(1, oldAv()), atIndex(2, updAv())},
			childset.RolloutPlan{Delete: []int{1}}},
		{"surge adds no names", 3, rolloutBounds(5, 1), 0,
			[]childset.RolloutChild{atIndex(0, oldAv()), atIndex(1, oldAv()), atIndex(2, oldAv())},
			childset.RolloutPlan{Delete: []int{2}}},
		{"maxUnavailable counts as 1", 2, rolloutBounds(1, 0), 0,
			[]childset.RolloutChild{atIndex(0, oldAv()), atIndex(1, oldAv())},
			childset.RolloutPlan{Delete: []int{1}}},
		{"partition keeps the low indices", 3, rolloutBounds(0, 3), 2,
			[]childset.RolloutChild{atIndex(0, oldAv()), atIndex(1, oldAv()), atIndex(2, oldAv())},
			childset.RolloutPlan{Delete: []int{2}}},
		{"a missing low index is created at the current revision", 3, rolloutBounds(0, 1), 2,
			[]childset.RolloutChild{atIndex(1, oldAv()), atIndex(2, updAv())},
			childset.RolloutPlan{CreateCurrentIndices: []int{0}}},
		{"an updated low index stays", 3, rolloutBounds(0, 1), 2,
			[]childset.RolloutChild{atIndex(0, updAv()), atIndex(1, oldAv()), atIndex(2, updAv())},
			childset.RolloutPlan{}},
		{"unavailable old children go first and cost nothing", 3, rolloutBounds(0, 1), 0,
			[]childset.RolloutChild{atIndex(0, oldUn()), atIndex(1, oldAv()), atIndex(2, oldAv())},
			childset.RolloutPlan{Delete: []int{0}}},
		{"unwanted children before replacements, no index first", 2, rolloutBounds(0, 1), 0,
			[]childset.RolloutChild{atIndex(0, oldAv()), atIndex(1, oldAv()), atIndex(2, oldAv()), oldAv()},
			childset.RolloutPlan{Delete: []int{3, 2, 1}}},
		{"the worse of two holders of an index is unwanted", 2, rolloutBounds(0, 1), 2,
			[]childset.RolloutChild{atIndex(1, oldAv()), atIndex(0, updAv()), atIndex(1, updAv())},
			childset.RolloutPlan{Delete: []int{0}}},
		{"surge lets a missing index in while unwanted ones go", 2, rolloutBounds(1, 1), 0,
			[]childset.RolloutChild{atIndex(0, updAv()), atIndex(3, beingDeleted(updAv()))},
			childset.RolloutPlan{CreateUpdatedIndices: []int{1}}},
		{"without surge it waits", 2, rolloutBounds(0, 1), 0,
			[]childset.RolloutChild{atIndex(0, updAv()), atIndex(3, beingDeleted(updAv()))},
			childset.RolloutPlan{}},
		{"lowest missing indices first", 4, rolloutBounds(1, 1), 1,
			[]childset.RolloutChild{atIndex(2, updAv())},
			childset.RolloutPlan{CreateCurrentIndices: []int{0}, CreateUpdatedIndices: []int{1, 3}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := childset.PlanRollout(childset.RolloutState{
				Replicas: tc.replicas, Bounds: tc.bounds, Partition: tc.partition, Indexed: true, Children: tc.children,
			})
			if !plansEqual(got, tc.want) {
				t.Errorf("PlanRollout = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func plansEqual(a, b childset.RolloutPlan) bool {
	return a.CreateUpdated == b.CreateUpdated && a.CreateCurrent == b.CreateCurrent &&
		slices.Equal(a.CreateUpdatedIndices, b.CreateUpdatedIndices) &&
		slices.Equal(a.CreateCurrentIndices, b.CreateCurrentIndices) &&
		slices.Equal(a.Delete, b.Delete)
}

func TestRolloutPlanEmpty(t *testing.T) {
	if !(childset.RolloutPlan{}).Empty() {
		t.Error("the zero plan is not empty")
	}
	for _, p := range []childset.RolloutPlan{{CreateUpdated: 1}, {CreateCurrent: 1}, {CreateUpdatedIndices: []int{0}}, {CreateCurrentIndices: []int{0}}, {Delete: []int{0}}} {
		if p.Empty() {
			t.Errorf("%+v is empty", p)
		}
	}
}

func ExampleRollingUpdate_Bounds() {
	surge, unavailable := intstr.FromString("50%"), intstr.FromInt32(0)
	for _, replicas := range []int32{0, 1, 3} {
		b, err := childset.RollingUpdate{MaxSurge: &surge, MaxUnavailable: &unavailable}.Bounds(replicas)
		fmt.Printf("%d replicas: %+v %v\n", replicas, b, err)
	}
	_, err := childset.RollingUpdate{MaxUnavailable: &unavailable, MaxSurge: &unavailable}.Bounds(3)
	fmt.Println(err)
	// Output:
	// 0 replicas: {MaxSurge:0 MaxUnavailable:0} <nil>
	// 1 replicas: {MaxSurge:1 MaxUnavailable:0} <nil>
	// 3 replicas: {MaxSurge:2 MaxUnavailable:0} <nil>
	// invalid rolling update: maxSurge and maxUnavailable may not both be 0
}

func ExamplePlanRollout() {
	update := childset.RollingUpdate{} // Deployment's defaults: 25% and 25%
	b, err := update.Bounds(4)
	if err != nil {
		panic(err)
	}
	// Four old children, all available: the first pass surges one updated
	// child and, as one child may be unavailable, deletes the first old one.
	children := []childset.RolloutChild{
		{Index: -1, Available: true}, {Index: -1, Available: true},
		{Index: -1, Available: true}, {Index: -1, Available: true},
	}
	plan := childset.PlanRollout(childset.RolloutState{Replicas: 4, Bounds: b, Children: children})
	fmt.Printf("bounds %+v: create %d updated, delete %v\n", b, plan.CreateUpdated, plan.Delete)
	// Output: bounds {MaxSurge:1 MaxUnavailable:1}: create 1 updated, delete [0]
}
