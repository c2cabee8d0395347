package childset

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Shorthands for table children: old or updated, available or not,
// being deleted; at an index (indexed mode) or not.
func oldAv() rolloutChild { return rolloutChild{Index: -1, Available: true} }
func oldUn() rolloutChild { return rolloutChild{Index: -1} }
func updAv() rolloutChild {
	return rolloutChild{Index: -1, Updated: true, Available: true}
}
func updUn() rolloutChild { return rolloutChild{Index: -1, Updated: true} }
func beingDeleted(c rolloutChild) rolloutChild {
	c.Deleting = true
	return c
}
func atIndex(i int, c rolloutChild) rolloutChild {
	c.Index = i
	return c
}

func rolloutBounds(surge, unavailable int32) RolloutBounds {
	return RolloutBounds{MaxSurge: surge, MaxUnavailable: unavailable}
}

func TestPlanRolloutInterchangeable(t *testing.T) {
	cases := []struct {
		name      string
		replicas  int32
		bounds    RolloutBounds
		partition int32
		burst     int
		children  []rolloutChild
		want      rolloutPlan
	}{
		{"surge first", 3, rolloutBounds(1, 0), 0, 0,
			[]rolloutChild{oldAv(), oldAv(), oldAv()},
			rolloutPlan{CreateUpdated: 1}},
		{"wait for the surged child", 3, rolloutBounds(1, 0), 0, 0,
			[]rolloutChild{oldAv(), oldAv(), oldAv(), updUn()},
			rolloutPlan{}},
		{"surged child available: delete the first old one", 3, rolloutBounds(1, 0), 0, 0,
			[]rolloutChild{oldAv(), oldAv(), oldAv(), updAv()},
			rolloutPlan{Delete: []int{0}}},
		{"no surge: delete before creating", 3, rolloutBounds(0, 1), 0, 0,
			[]rolloutChild{oldAv(), oldAv(), oldAv()},
			rolloutPlan{Delete: []int{0}}},
		{"a child being deleted takes room", 3, rolloutBounds(0, 1), 0, 0,
			[]rolloutChild{beingDeleted(oldAv()), oldAv(), oldAv()},
			rolloutPlan{}},
		{"its room is free once it is gone", 3, rolloutBounds(0, 1), 0, 0,
			[]rolloutChild{oldAv(), oldAv()},
			rolloutPlan{CreateUpdated: 1}},
		{"unavailable old children go first and cost nothing", 3, rolloutBounds(0, 1), 0, 0,
			[]rolloutChild{oldAv(), oldUn(), oldAv()},
			rolloutPlan{Delete: []int{1}}},
		{"then available ones while the margin lasts", 3, rolloutBounds(0, 2), 0, 0,
			[]rolloutChild{oldAv(), oldUn(), oldAv()},
			rolloutPlan{Delete: []int{1, 0}}},
		{"partition keeps old children", 4, rolloutBounds(1, 1), 3, 0,
			[]rolloutChild{oldAv(), oldAv(), oldAv(), oldAv()},
			rolloutPlan{CreateUpdated: 1, Delete: []int{0}}},
		{"partition reached", 4, rolloutBounds(1, 1), 3, 0,
			[]rolloutChild{oldAv(), oldAv(), oldAv(), updAv()},
			rolloutPlan{}},
		{"a missing child restores the partition", 4, rolloutBounds(1, 1), 2, 0,
			[]rolloutChild{oldAv(), updAv(), updAv()},
			rolloutPlan{CreateCurrent: 1}},
		{"never a rollback", 3, rolloutBounds(1, 1), 2, 0,
			[]rolloutChild{updAv(), updAv(), updAv()},
			rolloutPlan{}},
		{"scale down during a rollout deletes old children", 2, rolloutBounds(1, 1), 0, 0,
			[]rolloutChild{updAv(), oldAv(), updAv(), oldAv()},
			rolloutPlan{Delete: []int{1, 3}}},
		{"scale down under a partition deletes updated children", 3, rolloutBounds(1, 1), 2, 0,
			[]rolloutChild{updAv(), oldAv(), updUn(), oldAv(), updAv()},
			rolloutPlan{Delete: []int{2, 0}}},
		{"zero replicas", 0, rolloutBounds(0, 0), 0, 0,
			[]rolloutChild{updAv(), oldAv()},
			rolloutPlan{Delete: []int{1, 0}}},
		{"burst caps creations", 1000, rolloutBounds(250, 250), 0, 10,
			nil,
			rolloutPlan{CreateUpdated: 10}},
		{"room beyond int32", math.MaxInt32, rolloutBounds(math.MaxInt32, 0), 0, 10,
			nil,
			rolloutPlan{CreateUpdated: 10}},
		{"burst caps deletions, unavailable first", 0, rolloutBounds(0, 0), 0, 2,
			[]rolloutChild{oldAv(), oldUn(), oldAv()},
			rolloutPlan{Delete: []int{1, 0}}},
		{"indices are ignored", 2, rolloutBounds(0, 1), 0, 0,
			[]rolloutChild{atIndex(5, oldAv()), atIndex(0, oldAv())},
			rolloutPlan{Delete: []int{0}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := planRollout(rolloutInput{
				Replicas: tc.replicas, Bounds: tc.bounds, Partition: tc.partition, Burst: tc.burst, Children: tc.children,
			})
			if !plansEqual(got, tc.want) {
				t.Errorf("planRollout = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPlanRolloutIndexed(t *testing.T) {
	cases := []struct {
		name      string
		replicas  int32
		bounds    RolloutBounds
		partition int32
		children  []rolloutChild
		want      rolloutPlan
	}{
		{"highest index first", 3, rolloutBounds(0, 1), 0,
			[]rolloutChild{atIndex(0, oldAv()), atIndex(2, oldAv()), atIndex(1, oldAv())},
			rolloutPlan{Delete: []int{1}}},
		{"the name is held while it is deleted", 3, rolloutBounds(0, 1), 0,
			[]rolloutChild{atIndex(0, oldAv()), atIndex(2, beingDeleted(oldAv())), atIndex(1, oldAv())},
			rolloutPlan{}},
		{"created again at the update revision once gone", 3, rolloutBounds(0, 1), 0,
			[]rolloutChild{atIndex(0, oldAv()), atIndex(1, oldAv())},
			rolloutPlan{CreateUpdatedIndices: []int{2}}},
		{"next index once the new child is available", 3, rolloutBounds(0, 1), 0,
			[]rolloutChild{atIndex(0, oldAv()), atIndex(1, oldAv()), atIndex(2, updAv())},
			rolloutPlan{Delete: []int{1}}},
		{"surge adds no names", 3, rolloutBounds(5, 1), 0,
			[]rolloutChild{atIndex(0, oldAv()), atIndex(1, oldAv()), atIndex(2, oldAv())},
			rolloutPlan{Delete: []int{2}}},
		{"maxUnavailable counts as 1", 2, rolloutBounds(1, 0), 0,
			[]rolloutChild{atIndex(0, oldAv()), atIndex(1, oldAv())},
			rolloutPlan{Delete: []int{1}}},
		{"partition keeps the low indices", 3, rolloutBounds(0, 3), 2,
			[]rolloutChild{atIndex(0, oldAv()), atIndex(1, oldAv()), atIndex(2, oldAv())},
			rolloutPlan{Delete: []int{2}}},
		{"a missing low index is created at the current revision", 3, rolloutBounds(0, 1), 2,
			[]rolloutChild{atIndex(1, oldAv()), atIndex(2, updAv())},
			rolloutPlan{CreateCurrentIndices: []int{0}}},
		{"an updated low index stays", 3, rolloutBounds(0, 1), 2,
			[]rolloutChild{atIndex(0, updAv()), atIndex(1, oldAv()), atIndex(2, updAv())},
			rolloutPlan{}},
		{"unavailable old children go first and cost nothing", 3, rolloutBounds(0, 1), 0,
			[]rolloutChild{atIndex(0, oldUn()), atIndex(1, oldAv()), atIndex(2, oldAv())},
			rolloutPlan{Delete: []int{0}}},
		{"unwanted children before replacements, no index first", 2, rolloutBounds(0, 1), 0,
			[]rolloutChild{atIndex(0, oldAv()), atIndex(1, oldAv()), atIndex(2, oldAv()), oldAv()},
			rolloutPlan{Delete: []int{3, 2, 1}}},
		{"the worse of two holders of an index is unwanted", 2, rolloutBounds(0, 1), 2,
			[]rolloutChild{atIndex(1, oldAv()), atIndex(0, updAv()), atIndex(1, updAv())},
			rolloutPlan{Delete: []int{0}}},
		{"surge lets a missing index in while unwanted ones go", 2, rolloutBounds(1, 1), 0,
			[]rolloutChild{atIndex(0, updAv()), atIndex(3, beingDeleted(updAv()))},
			rolloutPlan{CreateUpdatedIndices: []int{1}}},
		{"without surge it waits", 2, rolloutBounds(0, 1), 0,
			[]rolloutChild{atIndex(0, updAv()), atIndex(3, beingDeleted(updAv()))},
			rolloutPlan{}},
		{"lowest missing indices first", 4, rolloutBounds(1, 1), 1,
			[]rolloutChild{atIndex(2, updAv())},
			rolloutPlan{CreateCurrentIndices: []int{0}, CreateUpdatedIndices: []int{1, 3}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := planRollout(rolloutInput{
				Replicas: tc.replicas, Bounds: tc.bounds, Partition: tc.partition, Indexed: true, Children: tc.children,
			})
			if !plansEqual(got, tc.want) {
				t.Errorf("planRollout = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func plansEqual(a, b rolloutPlan) bool {
	return a.CreateUpdated == b.CreateUpdated && a.CreateCurrent == b.CreateCurrent &&
		slices.Equal(a.CreateUpdatedIndices, b.CreateUpdatedIndices) &&
		slices.Equal(a.CreateCurrentIndices, b.CreateCurrentIndices) &&
		slices.Equal(a.Delete, b.Delete)
}

func TestRolloutPlanEmpty(t *testing.T) {
	if !(rolloutPlan{}).Empty() {
		t.Error("the zero plan is not empty")
	}
	for _, p := range []rolloutPlan{{CreateUpdated: 1}, {CreateCurrent: 1}, {CreateUpdatedIndices: []int{0}}, {CreateCurrentIndices: []int{0}}, {Delete: []int{0}}} {
		if p.Empty() {
			t.Errorf("%+v is empty", p)
		}
	}
}

func ExampleRollingUpdate_Bounds() {
	surge, unavailable := intstr.FromString("50%"), intstr.FromInt32(0)
	for _, replicas := range []int32{0, 1, 3} {
		b, err := RollingUpdate{MaxSurge: &surge, MaxUnavailable: &unavailable}.Bounds(replicas)
		fmt.Printf("%d replicas: %+v %v\n", replicas, b, err)
	}
	_, err := RollingUpdate{MaxUnavailable: &unavailable, MaxSurge: &unavailable}.Bounds(3)
	fmt.Println(err)
	// Output:
	// 0 replicas: {MaxSurge:0 MaxUnavailable:0} <nil>
	// 1 replicas: {MaxSurge:1 MaxUnavailable:0} <nil>
	// 3 replicas: {MaxSurge:2 MaxUnavailable:0} <nil>
	// invalid rolling update: maxSurge and maxUnavailable may not both be 0
}

// The first pass over four available old children under Deployment's
// defaults (25% and 25%) surges one updated child and, as one child may be
// unavailable, deletes the first old one.
func TestPlanRolloutFirstPassWithDefaults(t *testing.T) {
	b, err := RollingUpdate{}.Bounds(4)
	if err != nil {
		t.Fatal(err)
	}
	children := []rolloutChild{
		{Index: -1, Available: true}, {Index: -1, Available: true},
		{Index: -1, Available: true}, {Index: -1, Available: true},
	}
	plan := planRollout(rolloutInput{Replicas: 4, Bounds: b, Children: children})
	if b != (RolloutBounds{MaxSurge: 1, MaxUnavailable: 1}) || plan.CreateUpdated != 1 || !slices.Equal(plan.Delete, []int{0}) {
		t.Fatalf("bounds %+v: create %d updated, delete %v; want bounds {1 1}, create 1, delete [0]", b, plan.CreateUpdated, plan.Delete)
	}
}
