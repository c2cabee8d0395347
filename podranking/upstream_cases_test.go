package podranking

import (
	"sort" //nolint:depguard // checks ActivePodsWithRanks as sort.Interface, as upstream uses it
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fixture builds a pod the way upstream's TestSortingActivePodsWithRanks
// fixtures are described in the specification (§7.1): a ready pod carries one
// Ready=True condition, one regular container status and one sidecar status.
func fixture(name, node string, phase v1.PodPhase, ready bool, restarts, sideRestarts int32, readySince, created metav1.Time, ann map[string]string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: created, Annotations: ann},
		Spec:       v1.PodSpec{NodeName: node, InitContainers: []v1.Container{{Name: "sidecar", RestartPolicy: &always}}},
		Status:     v1.PodStatus{Phase: phase},
	}
	if ready {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: readySince}}
		p.Status.ContainerStatuses = []v1.ContainerStatus{{RestartCount: restarts}}
		p.Status.InitContainerStatuses = []v1.ContainerStatus{{Name: "sidecar", RestartCount: sideRestarts}}
	}
	return p
}

type rankedPod struct {
	pod  *v1.Pod
	rank int
}

// TestUpstreamSortingCases holds every case of upstream's
// TestSortingActivePodsWithRanks (§7.1) plus the cost-versus-rank pair the
// specification asks for. Each pair is checked through Less in both
// directions, through Select and through Sorted.
func TestUpstreamSortingCases(t *testing.T) {
	now := metav1.Now()
	then1Month := metav1.NewTime(now.AddDate(0, -1, 0))
	then2Hours := metav1.NewTime(now.Add(-2 * time.Hour))
	then5Hours := metav1.NewTime(now.Add(-5 * time.Hour))
	then8Hours := metav1.NewTime(now.Add(-8 * time.Hour))
	zero := metav1.Time{}
	var (
		unscheduled          = fixture("unscheduled", "", v1.PodPending, false, 0, 0, zero, zero, nil)
		scheduledPending     = fixture("pending", "node", v1.PodPending, false, 0, 0, zero, zero, nil)
		unknownPhase         = fixture("unknown-phase", "node", v1.PodUnknown, false, 0, 0, zero, zero, nil)
		runningNotReady      = fixture("not-ready", "node", v1.PodRunning, false, 0, 0, zero, zero, nil)
		readyNoLTT           = fixture("ready-no-ltt", "node", v1.PodRunning, true, 0, 0, zero, zero, nil)
		readyNow             = fixture("ready-now", "node", v1.PodRunning, true, 0, 0, now, now, nil)
		readyThen            = fixture("ready-then", "node", v1.PodRunning, true, 0, 0, then1Month, then1Month, nil)
		readyNowHighRestarts = fixture("ready-high-restarts", "node", v1.PodRunning, true, 9001, 0, now, now, nil)
		readyNowHighSide     = fixture("ready-high-side-restarts", "node", v1.PodRunning, true, 9001, 9001, now, now, nil)
		readyNowCreatedThen  = fixture("ready-now-created-then", "node", v1.PodRunning, true, 0, 0, now, then1Month, nil)
		lowCost              = fixture("low-cost", "node", v1.PodRunning, true, 0, 0, now, then1Month, map[string]string{DeletionCostAnnotation: "10"})
		highCost             = fixture("high-cost", "node", v1.PodRunning, true, 0, 0, now, then1Month, map[string]string{DeletionCostAnnotation: "100"})
		unscheduled5Hours    = fixture("unscheduled-5-hours", "", v1.PodPending, false, 0, 0, then5Hours, then5Hours, nil)
		unscheduled8Hours    = fixture("unscheduled-8-hours", "", v1.PodPending, false, 0, 0, then8Hours, then8Hours, nil)
		ready2Hours          = fixture("ready-2-hours", "", v1.PodRunning, true, 0, 0, then2Hours, then1Month, nil)
		ready5Hours          = fixture("ready-5-hours", "", v1.PodRunning, true, 0, 0, then5Hours, then1Month, nil)
		ready8Hours          = fixture("ready-8-hours", "", v1.PodRunning, true, 0, 0, then8Hours, then1Month, nil)
	)

	equal := []struct{ a, b *v1.Pod }{
		{unscheduled, nil}, {scheduledPending, nil}, {unknownPhase, nil}, {runningNotReady, nil},
		{readyNowCreatedThen, nil}, {readyNow, nil}, {readyThen, nil}, {readyNowHighRestarts, nil},
		{unscheduled5Hours, unscheduled8Hours}, // same log2 bucket, equal (empty) UIDs
		{ready5Hours, ready8Hours},             // buckets 44 and 44
	}
	for _, tt := range equal {
		b := tt.b
		if b == nil {
			b = tt.a
		}
		t.Run("equal "+tt.a.Name+" "+b.Name, func(t *testing.T) {
			s := ActivePodsWithRanks{Pods: []*v1.Pod{tt.a, b}, Rank: []int{1, 1}, Now: now}
			assert.False(t, s.Less(0, 1))
			assert.False(t, s.Less(1, 0))
			assert.Equal(t, RuleNone, s.Explain(0, 1).Rule)
		})
	}

	unequal := []struct {
		name            string
		lesser, greater rankedPod
		noCost          bool
	}{
		{"unscheduled before scheduled (rank 1 vs 2)", rankedPod{unscheduled, 1}, rankedPod{scheduledPending, 2}, false},
		{"unscheduled before scheduled (rank 2 vs 1)", rankedPod{unscheduled, 2}, rankedPod{scheduledPending, 1}, false},
		{"pending before unknown", rankedPod{scheduledPending, 1}, rankedPod{unknownPhase, 2}, false},
		{"unknown before running", rankedPod{unknownPhase, 1}, rankedPod{runningNotReady, 2}, false},
		{"not ready before ready", rankedPod{runningNotReady, 1}, rankedPod{readyNoLTT, 1}, false},
		{"zero ready time first", rankedPod{readyNoLTT, 1}, rankedPod{readyNow, 1}, false},
		{"rank beats ready time", rankedPod{readyNow, 2}, rankedPod{readyNoLTT, 1}, false},
		{"younger ready first", rankedPod{readyNow, 1}, rankedPod{readyThen, 1}, false},
		{"rank beats younger", rankedPod{readyNow, 2}, rankedPod{readyThen, 1}, false},
		{"more restarts first", rankedPod{readyNowHighRestarts, 1}, rankedPod{readyNow, 1}, false},
		{"more sidecar restarts first", rankedPod{readyNowHighSide, 1}, rankedPod{readyNowHighRestarts, 1}, false},
		{"rank beats restarts", rankedPod{readyNow, 2}, rankedPod{readyNowHighRestarts, 1}, false},
		{"newer creation first", rankedPod{readyNow, 1}, rankedPod{readyNowCreatedThen, 1}, false},
		{"rank beats creation", rankedPod{readyNowCreatedThen, 2}, rankedPod{readyNow, 1}, false},
		{"lower cost first (also higher rank)", rankedPod{lowCost, 2}, rankedPod{highCost, 1}, false},
		{"lower cost beats higher rank", rankedPod{lowCost, 1}, rankedPod{highCost, 2}, false},
		{"cost disabled: rank decides", rankedPod{highCost, 2}, rankedPod{lowCost, 1}, true},
		{"log buckets 42 before 44", rankedPod{ready2Hours, 1}, rankedPod{ready5Hours, 1}, false},
	}
	for _, tt := range unequal {
		t.Run(tt.name, func(t *testing.T) {
			s := ActivePodsWithRanks{
				Pods: []*v1.Pod{tt.lesser.pod, tt.greater.pod}, Rank: []int{tt.lesser.rank, tt.greater.rank},
				Now: now, DisableDeletionCost: tt.noCost,
			}
			assert.True(t, s.Less(0, 1), "lesser must go first")
			assert.False(t, s.Less(1, 0), "greater must not go first")
			// Same answer from the key-based paths, from either input order.
			rev := ActivePodsWithRanks{
				Pods: []*v1.Pod{tt.greater.pod, tt.lesser.pod}, Rank: []int{tt.greater.rank, tt.lesser.rank},
				Now: now, DisableDeletionCost: tt.noCost,
			}
			assert.Equal(t, []*v1.Pod{tt.lesser.pod}, rev.Select(1))
			assert.Equal(t, []*v1.Pod{tt.lesser.pod, tt.greater.pod}, rev.Sorted())
			// And from the literal reference implementation.
			ref := refSorter{pods: s.Pods, rank: s.Rank, now: now.Time, noCost: tt.noCost}
			assert.True(t, ref.Less(0, 1))
			assert.False(t, ref.Less(1, 0))
		})
	}
}

// TestLogBuckets pins the bucket arithmetic of §2.4: 2h -> 42, 5h and 8h -> 44,
// a month -> 51, ages <= 0 -> -1, and the float64 rounding just below 2^54.
func TestLogBuckets(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int64
	}{
		{2 * time.Hour, 42}, {5 * time.Hour, 44}, {8 * time.Hour, 44}, {30 * 24 * time.Hour, 51},
		{0, -1}, {-time.Second, -1}, {1, 0}, {2, 1}, {3, 1}, {4, 2},
		{1<<54 - 1, 54}, // float64(2^54-1) rounds to 2^54, as in upstream
		{1<<53 - 1, 53}, // exact in float64, yet Log2's own rounding lands on 53.0
		{time.Duration(1<<63 - 1), 63},
	}
	for _, tt := range tests {
		pol := newPolicy(time.Unix(0, 0), false, false, false)
		assert.Equal(t, tt.want, int64(pol.bucket(time.Unix(0, 0).Add(-tt.d))), "d=%d", int64(tt.d))
		assert.Equal(t, tt.want, refBucket(time.Unix(0, 0).Add(-tt.d), time.Unix(0, 0)), "reference d=%d", int64(tt.d))
	}
}

// TestUpstreamGetPodsToDelete holds upstream's TestGetPodsToDelete (§7.4).
func TestUpstreamGetPodsToDelete(t *testing.T) {
	unscheduledPending := fixture("unscheduled-pending", "", v1.PodPending, false, 0, 0, metav1.Time{}, metav1.Time{}, nil)
	scheduledPending := fixture("scheduled-pending", "fake-node", v1.PodPending, false, 0, 0, metav1.Time{}, metav1.Time{}, nil)
	runningNotReady := fixture("running-not-ready", "fake-node", v1.PodRunning, false, 0, 0, metav1.Time{}, metav1.Time{}, nil)
	runningNotReady.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}}
	readyNode1 := fixture("ready-node-1", "fake-node-1", v1.PodRunning, true, 0, 0, metav1.Time{}, metav1.Time{}, nil)
	readyNode2 := fixture("ready-node-2", "fake-node-2", v1.PodRunning, true, 0, 0, metav1.Time{}, metav1.Time{}, nil)

	tests := []struct {
		name    string
		pods    []*v1.Pod
		related []*v1.Pod // nil means: the pods themselves
		diff    int
		want    []*v1.Pod
	}{
		{"len(pods) = 0", []*v1.Pod{}, nil, 0, []*v1.Pod{}},
		{"diff = len(pods)", []*v1.Pod{runningNotReady, readyNode1}, nil, 2, []*v1.Pod{runningNotReady, readyNode1}},
		{"diff < len(pods)", []*v1.Pod{readyNode1, runningNotReady}, nil, 1, []*v1.Pod{runningNotReady}},
		{
			"various phases, diff = len(pods): input order",
			[]*v1.Pod{readyNode1, readyNode1, readyNode2, runningNotReady, scheduledPending, unscheduledPending}, nil, 6,
			[]*v1.Pod{readyNode1, readyNode1, readyNode2, runningNotReady, scheduledPending, unscheduledPending},
		},
		{
			"various phases, diff = len(pods), related empty",
			[]*v1.Pod{readyNode1, readyNode1, readyNode2, runningNotReady, scheduledPending, unscheduledPending}, []*v1.Pod{}, 6,
			[]*v1.Pod{readyNode1, readyNode1, readyNode2, runningNotReady, scheduledPending, unscheduledPending},
		},
		{"scheduled vs unscheduled", []*v1.Pod{scheduledPending, unscheduledPending}, nil, 1, []*v1.Pod{unscheduledPending}},
		{"ready vs not-ready", []*v1.Pod{readyNode1, runningNotReady, runningNotReady}, nil, 2, []*v1.Pod{runningNotReady, runningNotReady}},
		{
			"colocated ready first", []*v1.Pod{readyNode1, readyNode2},
			[]*v1.Pod{readyNode1, readyNode2, readyNode2}, 1, []*v1.Pod{readyNode2},
		},
		{"pending vs running", []*v1.Pod{scheduledPending, runningNotReady}, nil, 1, []*v1.Pod{scheduledPending}},
		{
			"various phases, diff < len(pods)",
			[]*v1.Pod{readyNode1, readyNode2, runningNotReady, scheduledPending, unscheduledPending}, nil, 3,
			[]*v1.Pod{unscheduledPending, scheduledPending, runningNotReady},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			related := tt.related
			if related == nil {
				related = tt.pods
			}
			input := make([]*v1.Pod, len(tt.pods))
			copy(input, tt.pods)
			got := PodsToDelete(tt.pods, related, tt.diff)
			assert.Len(t, got, len(tt.want))
			if len(tt.want) > 0 {
				assert.Equal(t, tt.want, got)
			}
			assert.Equal(t, input, tt.pods, "the caller's slice must not be reordered")
			ref := refPodsToDelete(append([]*v1.Pod(nil), tt.pods...), related, tt.diff, time.Now())
			require.Len(t, ref, len(got))
			for i := range ref {
				assert.Same(t, ref[i], got[i], "position %d", i)
			}
		})
	}
}

// TestSortInterface checks that sort.Sort over ActivePodsWithRanks keeps
// Rank aligned with Pods and agrees with Sorted.
func TestSortInterface(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	pods := genPods(newRand(7), 200, now, genConfig{nodes: 5, distinct: true})
	ranks := make([]int, len(pods))
	rankOf := map[*v1.Pod]int{}
	for i, p := range pods {
		ranks[i] = i % 4
		rankOf[p] = ranks[i]
	}
	s := ActivePodsWithRanks{Pods: append([]*v1.Pod(nil), pods...), Rank: ranks, Now: metav1.NewTime(now)}
	want := s.Sorted()
	sort.Sort(s)
	assert.Equal(t, want, s.Pods)
	for i, p := range s.Pods {
		assert.Equal(t, rankOf[p], s.Rank[i], "rank must move with its pod")
	}
	assert.Equal(t, len(pods), s.Len())
}
