package podranking

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort" //nolint:depguard // the reference is upstream's algorithm: sort.Sort over its Less and Swap
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// refSorter is a literal, per-comparison re-implementation of upstream's
// ActivePodsWithRanks.Less written from the specification: it re-reads
// readiness, re-parses the cost annotation (with strconv, allocating an error
// for invalid values) and rebuilds the sidecar name set on every call, like
// upstream. It is the reference for the differential tests and the baseline
// of the benchmarks.
type refSorter struct {
	pods       []*v1.Pod
	rank       []int
	now        time.Time
	noCost     bool
	noLogScale bool
}

func (s refSorter) Len() int { return len(s.pods) }
func (s refSorter) Swap(i, j int) {
	s.pods[i], s.pods[j] = s.pods[j], s.pods[i]
	s.rank[i], s.rank[j] = s.rank[j], s.rank[i]
}

func refReady(p *v1.Pod) (bool, time.Time) {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			if c.Status == v1.ConditionTrue {
				return true, c.LastTransitionTime.Time
			}
			return false, time.Time{}
		}
	}
	return false, time.Time{}
}

func refCost(ann map[string]string) (int32, error) {
	v, ok := ann[DeletionCostAnnotation]
	if !ok {
		return 0, nil
	}
	if len(v) == 0 || !(v[0] == '-' || v == "0" || (v[0] >= '1' && v[0] <= '9')) {
		return 0, fmt.Errorf("invalid value %q", v)
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, err
	}
	return int32(n), nil
}

func refRestarts(p *v1.Pod) (int, int) {
	reg, side := 0, 0
	for _, c := range p.Status.ContainerStatuses {
		reg = max(reg, int(c.RestartCount))
	}
	names := map[string]bool{}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			names[c.Name] = true
		}
	}
	for _, c := range p.Status.InitContainerStatuses {
		if names[c.Name] {
			side = max(side, int(c.RestartCount))
		}
	}
	return reg, side
}

var refPhase = map[v1.PodPhase]int{v1.PodPending: 0, v1.PodUnknown: 1, v1.PodRunning: 2}

func refAfterOrZero(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero()
	}
	return a.After(b)
}

func refBucket(t, now time.Time) int64 {
	d := now.Sub(t)
	if d <= 0 {
		return -1
	}
	return int64(math.Log2(float64(d)))
}

// refTime returns (less, decided) for rules 6/8 exactly as upstream.
func (s refSorter) refTime(ti, tj time.Time, ui, uj types.UID) (bool, bool) {
	if ti.Equal(tj) {
		return false, false
	}
	if s.noLogScale || s.now.IsZero() || ti.IsZero() || tj.IsZero() {
		return refAfterOrZero(ti, tj), true
	}
	d := refBucket(ti, s.now) - refBucket(tj, s.now)
	if d == 0 {
		return ui < uj, true
	}
	return d < 0, true
}

func (s refSorter) Less(i, j int) bool {
	a, b := s.pods[i], s.pods[j]
	if a.Spec.NodeName != b.Spec.NodeName && (a.Spec.NodeName == "" || b.Spec.NodeName == "") {
		return a.Spec.NodeName == ""
	}
	if refPhase[a.Status.Phase] != refPhase[b.Status.Phase] {
		return refPhase[a.Status.Phase] < refPhase[b.Status.Phase]
	}
	ra, ta := refReady(a)
	rb, tb := refReady(b)
	if ra != rb {
		return !ra
	}
	if !s.noCost {
		ca, _ := refCost(a.Annotations)
		cb, _ := refCost(b.Annotations)
		if ca != cb {
			return ca < cb
		}
	}
	if s.rank[i] != s.rank[j] {
		return s.rank[i] > s.rank[j]
	}
	if ra && rb {
		if less, ok := s.refTime(ta, tb, a.UID, b.UID); ok {
			return less
		}
	}
	rega, sidea := refRestarts(a)
	regb, sideb := refRestarts(b)
	if rega != regb {
		return rega > regb
	}
	if sidea != sideb {
		return sidea > sideb
	}
	if less, ok := s.refTime(a.CreationTimestamp.Time, b.CreationTimestamp.Time, a.UID, b.UID); ok {
		return less
	}
	return false
}

// genConfig shapes random pods.
type genConfig struct {
	nodes         int  // number of node names; 0 means all unassigned
	distinct      bool // nanosecond-distinct instants, so no equal-instant corner
	sameUIDs      bool // every UID empty, as in upstream's unit tests
	invalidCosts  bool // sometimes put invalid cost values
	zeroTimeShare int  // 1 in zeroTimeShare times is zero (0: never)
}

var always = v1.ContainerRestartPolicyAlways

func genPods(r *rand.Rand, n int, now time.Time, cfg genConfig) []*v1.Pod {
	pods := make([]*v1.Pod, n)
	phases := []v1.PodPhase{v1.PodPending, v1.PodUnknown, v1.PodRunning, v1.PodRunning, v1.PodRunning, ""}
	costs := []string{"", "0", "-5", "10", "100", "2147483647", "-2147483648"}
	bad := []string{"+10", "008", "abc", "", "99999999999"}
	var serial time.Duration
	randTime := func() time.Time {
		if cfg.zeroTimeShare > 0 && r.IntN(cfg.zeroTimeShare) == 0 {
			return time.Time{}
		}
		// Ages from the future (-1 min) up to ~2 years, log-uniform so many
		// buckets are hit, on whole seconds unless distinct is set.
		age := time.Duration(math.Exp2(r.Float64()*56)) - time.Minute
		t := now.Add(-age)
		if cfg.distinct {
			// A per-call serial in the low bits guarantees distinct instants.
			serial++
			return t.Truncate(1 << 20).Add(serial)
		}
		return t.Truncate(time.Hour * time.Duration(1+r.IntN(2)))
	}
	for i := range pods {
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:         "ns",
				Name:              fmt.Sprintf("pod-%d", i),
				CreationTimestamp: metav1.NewTime(randTime()),
			},
			Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "side", RestartPolicy: &always}, {Name: "init"}}},
		}
		if !cfg.sameUIDs {
			p.UID = types.UID(fmt.Sprintf("%08x-%d", r.Uint32(), i))
		}
		if cfg.nodes > 0 && r.IntN(8) != 0 {
			p.Spec.NodeName = fmt.Sprintf("node-%d", r.IntN(cfg.nodes))
		}
		p.Status.Phase = phases[r.IntN(len(phases))]
		if r.IntN(4) != 0 {
			st := v1.ConditionTrue
			if r.IntN(4) == 0 {
				st = v1.ConditionFalse
			}
			p.Status.Conditions = []v1.PodCondition{
				{Type: v1.PodScheduled, Status: v1.ConditionTrue},
				{Type: v1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(randTime())},
			}
		}
		if c := costs[r.IntN(len(costs))]; c != "" {
			p.Annotations = map[string]string{DeletionCostAnnotation: c}
		}
		if cfg.invalidCosts && r.IntN(6) == 0 {
			p.Annotations = map[string]string{DeletionCostAnnotation: bad[r.IntN(len(bad))]}
		}
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app", RestartCount: int32(r.IntN(3))}}
		p.Status.InitContainerStatuses = []v1.ContainerStatus{{Name: "side", RestartCount: int32(r.IntN(3))}, {Name: "init", RestartCount: int32(r.IntN(9))}}
		pods[i] = p
	}
	return pods
}

// refPodsToDelete is upstream's getPodsToDelete on a copy with a fixed now.
func refPodsToDelete(filtered, related []*v1.Pod, diff int, now time.Time) []*v1.Pod {
	if diff >= len(filtered) {
		return filtered[:diff]
	}
	s := RankByRelatedPodsOnSameNode(filtered, related)
	ref := refSorter{pods: append([]*v1.Pod(nil), filtered...), rank: s.Rank, now: now}
	sort.Sort(ref)
	return ref.pods[:diff]
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// names renders pods compactly, so a failed comparison prints names rather
// than diffing whole pod structs.
func names(pods []*v1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		if p == nil {
			out[i] = "<nil>"
			continue
		}
		out[i] = p.Name
	}
	return out
}

// testNow is the reference time of the random tests.
var testNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
