package podranking

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// zonePods returns ready, running pods spread over zones: counts[z] pods in
// zone z, each on its own node "z<z>-n<i>".
func zonePods(now time.Time, counts ...int) []*v1.Pod {
	var pods []*v1.Pod
	for z, c := range counts {
		for i := 0; i < c; i++ {
			node := fmt.Sprintf("z%d-n%d", z, i)
			p := fixture(fmt.Sprintf("z%d-p%d", z, i), node, v1.PodRunning, true, 0, 0,
				metav1.NewTime(now.Add(-time.Duration(1+i+z*7)*time.Minute)), metav1.NewTime(now.Add(-48*time.Hour)), nil)
			p.UID = types.UID(fmt.Sprint("uid-", z, "-", i))
			pods = append(pods, p)
		}
	}
	return pods
}

func zoneOfNode(node string) string {
	if len(node) < 2 {
		return ""
	}
	return node[:2]
}

func countZones(pods []*v1.Pod) map[string]int {
	m := map[string]int{}
	for _, p := range pods {
		if p != nil {
			m[zoneOfNode(p.Spec.NodeName)]++
		}
	}
	return m
}

func TestZoneSpread(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		counts []int
		diff   int
		want   map[string]int // pods left per zone
	}{
		{"uneven 6/3/3, delete 3", []int{6, 3, 3}, 3, map[string]int{"z0": 3, "z1": 3, "z2": 3}},
		{"uneven 6/3/3, delete 6", []int{6, 3, 3}, 6, map[string]int{"z0": 2, "z1": 2, "z2": 2}},
		{"even 4/4/4, delete 3", []int{4, 4, 4}, 3, map[string]int{"z0": 3, "z1": 3, "z2": 3}},
		{"10/1, delete 5", []int{10, 1}, 5, map[string]int{"z0": 5, "z1": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods := zonePods(now, tt.counts...)
			sel := NewSelector(WithNow(now), WithRankersFirst(ZoneSpread(zoneOfNode)))
			del := sel.PodsToDelete(pods, pods, tt.diff)
			require.Len(t, del, tt.diff)
			left := countZones(pods)
			for z, c := range countZones(del) {
				left[z] -= c
			}
			assert.Equal(t, tt.want, left)
			// Within a zone the built-in order still decides: the most
			// recently ready pod of zone 0 goes first.
			assert.Equal(t, "z0-p0", del[0].Name)
		})
	}

	t.Run("upstream alone empties the youngest zone first", func(t *testing.T) {
		// Zone 0 pods became ready most recently, so without spreading the
		// built-in rules delete them all.
		pods := zonePods(now, 3, 3, 3)
		del := NewSelector(WithNow(now), WithoutLogarithmicScaleDown()).PodsToDelete(pods, pods, 3)
		assert.Equal(t, map[string]int{"z0": 3}, countZones(del))
		spread := NewSelector(WithNow(now), WithoutLogarithmicScaleDown(), WithRankersFirst(ZoneSpread(zoneOfNode))).PodsToDelete(pods, pods, 3)
		assert.Equal(t, map[string]int{"z0": 1, "z1": 1, "z2": 1}, countZones(spread))
	})

	t.Run("unassigned and nil pods", func(t *testing.T) {
		pods := zonePods(now, 3, 1)
		unassigned := fixture("pending", "", v1.PodPending, false, 0, 0, metav1.Time{}, metav1.NewTime(now), nil)
		in := append([]*v1.Pod{nil, unassigned}, pods...)
		sel := NewSelector(WithNow(now), WithRankersFirst(ZoneSpread(zoneOfNode)))
		del := sel.PodsToDelete(in, in, 2)
		assert.Equal(t, "pending", del[0].Name, "unassigned pods go first")
		assert.Equal(t, "z0-p0", del[1].Name)
		order := sel.Order(in, in)
		assert.Nil(t, order[len(order)-1], "nil pods go last")
		d := sel.Explain(in, in, del[1], pods[3])
		assert.Equal(t, RuleExtension, d.Rule)
		assert.Equal(t, "zone-spread", d.Ranker)
		assert.Equal(t, "-3", d.AValue)
		assert.Equal(t, "-1", d.BValue)
		assert.Contains(t, d.String(), `extension "zone-spread"`)
	})

	t.Run("nil zoneOf keeps the built-in order", func(t *testing.T) {
		pods := zonePods(now, 3, 2)
		plain := NewSelector(WithNow(now)).Order(pods, pods)
		spread := NewSelector(WithNow(now), WithRankersFirst(ZoneSpread(nil))).Order(pods, pods)
		assert.Equal(t, names(plain), names(spread))
	})
}

func TestRankerPlacement(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	// Three pods the built-in rules find equivalent, one unassigned pod.
	mk := func(name, node string) *v1.Pod {
		return fixture(name, node, v1.PodRunning, false, 0, 0, metav1.Time{}, metav1.Time{}, nil)
	}
	a, b, c := mk("a", "n"), mk("b", "n"), mk("c", "n")
	u := fixture("u", "", v1.PodPending, false, 0, 0, metav1.Time{}, metav1.Time{}, nil)
	pods := []*v1.Pod{a, b, c, u}
	preferC := RankerFunc{RankerName: "prefer-c", Func: func(p *v1.Pod) int64 {
		if p != nil && p.Name == "c" {
			return -1
		}
		return 0
	}}
	tests := []struct {
		name string
		opts []Option
		want []string
	}{
		{"built-in only: ties keep input order", nil, []string{"u", "a", "b", "c"}},
		{"last: breaks built-in ties only", []Option{WithRankersLast(preferC)}, []string{"u", "c", "a", "b"}},
		{"first: overrides the built-in rules", []Option{WithRankersFirst(preferC)}, []string{"c", "u", "a", "b"}},
		{"several: first-listed decides first", []Option{
			WithRankersFirst(RankerFunc{RankerName: "prefer-b", Func: func(p *v1.Pod) int64 {
				if p.Name == "b" {
					return -5
				}
				return 0
			}}, preferC),
		}, []string{"b", "c", "u", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel := NewSelector(append([]Option{WithNow(now)}, tt.opts...)...)
			assert.Equal(t, tt.want, names(sel.Order(pods, pods)))
			assert.Equal(t, tt.want[:2], names(sel.PodsToDelete(pods, pods, 2)))
		})
	}
	d := NewSelector(WithNow(now), WithRankersLast(preferC)).Explain(pods, pods, c, a)
	assert.Equal(t, RuleExtension, d.Rule)
	assert.Equal(t, "prefer-c", d.Ranker)
	assert.True(t, d.AFirst())
}

// TestRankerThen checks the comparator a leading ranker receives sees the
// rules after it: the built-in rules and the trailing rankers.
func TestRankerThen(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	a := fixture("a", "n", v1.PodRunning, false, 0, 0, metav1.Time{}, metav1.Time{}, nil)
	b := fixture("b", "n", v1.PodRunning, false, 0, 0, metav1.Time{}, metav1.Time{}, nil)
	u := fixture("u", "", v1.PodPending, false, 0, 0, metav1.Time{}, metav1.Time{}, nil)
	var seen [][3]int
	probe := probeRanker{f: func(pods []*v1.Pod, then func(i, j int) int) {
		seen = append(seen, [3]int{then(0, 1), then(2, 0), then(0, 0)})
	}}
	preferB := RankerFunc{RankerName: "prefer-b", Func: func(p *v1.Pod) int64 {
		if p.Name == "b" {
			return -1
		}
		return 0
	}}
	NewSelector(WithNow(now), WithRankersFirst(probe), WithRankersLast(preferB)).Order([]*v1.Pod{a, b, u}, nil)
	require.Len(t, seen, 1)
	assert.Equal(t, [3]int{1, -1, 0}, seen[0], "b before a via the trailing ranker; u before a via rule 1")
}

type probeRanker struct {
	f func([]*v1.Pod, func(i, j int) int)
}

func (probeRanker) Name() string { return "probe" }
func (p probeRanker) Score(pods []*v1.Pod, _ []int64, then func(i, j int) int) {
	p.f(pods, then)
}
