package podstate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func podWithPhase(name string, phase v1.PodPhase, deleting bool) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Status: v1.PodStatus{Phase: phase}}
	if deleting {
		ts := metav1.Now()
		p.DeletionTimestamp = &ts
	}
	return p
}

func TestIsActiveAndTerminating(t *testing.T) {
	tests := []struct {
		name        string
		pod         *v1.Pod
		active      bool
		terminating bool
	}{
		{"nil", nil, false, false},
		{"empty phase", podWithPhase("a", "", false), true, false},
		{"pending", podWithPhase("a", v1.PodPending, false), true, false},
		{"unknown", podWithPhase("a", v1.PodUnknown, false), true, false},
		{"running", podWithPhase("a", v1.PodRunning, false), true, false},
		{"succeeded", podWithPhase("a", v1.PodSucceeded, false), false, false},
		{"failed", podWithPhase("a", v1.PodFailed, false), false, false},
		{"running deleting", podWithPhase("a", v1.PodRunning, true), false, true},
		{"pending deleting", podWithPhase("a", v1.PodPending, true), false, true},
		{"succeeded deleting", podWithPhase("a", v1.PodSucceeded, true), false, false},
		{"failed deleting", podWithPhase("a", v1.PodFailed, true), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.active, IsActive(tt.pod))
			assert.Equal(t, tt.terminating, IsTerminating(tt.pod))
		})
	}
}

// TestIsPodPhaseTerminal holds upstream's answers: Succeeded and Failed
// only.
func TestIsPodPhaseTerminal(t *testing.T) {
	for _, tt := range []struct {
		phase v1.PodPhase
		want  bool
	}{
		{"", false},
		{v1.PodPending, false},
		{v1.PodRunning, false},
		{v1.PodUnknown, false},
		{v1.PodSucceeded, true},
		{v1.PodFailed, true},
		{"Evicted", false},
	} {
		assert.Equal(t, tt.want, IsPodPhaseTerminal(tt.phase), "phase %q", tt.phase)
	}
	assert.Equal(t, "NodeLost", NodeUnreachablePodReason)
}

func TestFilters(t *testing.T) {
	a := podWithPhase("a", v1.PodRunning, false)
	b := podWithPhase("b", v1.PodSucceeded, false)
	c := podWithPhase("c", v1.PodPending, true)
	d := podWithPhase("d", v1.PodPending, false)
	e := podWithPhase("e", v1.PodFailed, true)
	tests := []struct {
		name        string
		in          []*v1.Pod
		active      []*v1.Pod
		terminating []*v1.Pod
	}{
		{"nil input", nil, nil, nil},
		{"empty input", []*v1.Pod{}, nil, nil},
		{"only nils", []*v1.Pod{nil, nil}, nil, nil},
		{"mixed keeps order", []*v1.Pod{a, b, nil, c, d, e}, []*v1.Pod{a, d}, []*v1.Pod{c}},
		{"none active", []*v1.Pod{b, e}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FilterActive(tt.in)
			assert.Equal(t, tt.active, got)
			if tt.active == nil {
				assert.Nil(t, got, "upstream returns a nil slice when nothing matches")
			}
			assert.Equal(t, tt.terminating, FilterTerminating(tt.in))
		})
	}
}

func readyPod(conds ...v1.PodCondition) *v1.Pod {
	return &v1.Pod{Status: v1.PodStatus{Conditions: conds}}
}

func TestReadiness(t *testing.T) {
	t1 := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	t2 := metav1.NewTime(t1.Add(time.Hour))
	tests := []struct {
		name      string
		pod       *v1.Pod
		ready     bool
		readyTime metav1.Time
		condIdx   int // -1: no condition
	}{
		{"nil pod", nil, false, metav1.Time{}, -1},
		{"no conditions", readyPod(), false, metav1.Time{}, -1},
		{"other conditions only", readyPod(v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue}), false, metav1.Time{}, -1},
		{"ready true", readyPod(v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: t1}), true, t1, 0},
		{"ready false", readyPod(v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: t1}), false, metav1.Time{}, 0},
		{"ready unknown", readyPod(v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionUnknown}), false, metav1.Time{}, 0},
		{"first ready wins (false then true)", readyPod(
			v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue},
			v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: t1},
			v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: t2}), false, metav1.Time{}, 1},
		{"first ready wins (true then false)", readyPod(
			v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: t2},
			v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: t1}), true, t2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.ready, IsReady(tt.pod))
			assert.True(t, tt.readyTime.Equal(ptr(ReadyTime(tt.pod))), "ready time")
			if tt.pod == nil {
				return
			}
			c := ReadyCondition(tt.pod.Status)
			if tt.condIdx < 0 {
				assert.Nil(t, c)
				return
			}
			require.NotNil(t, c)
			assert.Equal(t, tt.pod.Status.Conditions[tt.condIdx], *c)
		})
	}
}

func ptr(t metav1.Time) *metav1.Time { return &t }

// TestIsAvailable holds the upstream TestIsPodAvailable table (§7.5) plus the
// nil and negative cases.
func TestIsAvailable(t *testing.T) {
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	mk := func(ready bool, beforeSec int, zeroLTT bool) *v1.Pod {
		status := v1.ConditionFalse
		if ready {
			status = v1.ConditionTrue
		}
		ltt := metav1.NewTime(now.Add(-time.Duration(beforeSec) * time.Second))
		if zeroLTT {
			ltt = metav1.Time{}
		}
		return readyPod(v1.PodCondition{Type: v1.PodReady, Status: status, LastTransitionTime: ltt})
	}
	tests := []struct {
		name            string
		pod             *v1.Pod
		minReadySeconds int32
		want            bool
	}{
		{"not ready", mk(false, 0, false), 0, false},
		{"ready now, min 1", mk(true, 0, false), 1, false},
		{"ready zero LTT, min 1", mk(true, 0, true), 1, false},
		{"ready zero LTT, min 0", mk(true, 0, true), 0, true},
		{"ready now, min 0", mk(true, 0, false), 0, true},
		{"ready 51s, min 50", mk(true, 51, false), 50, true},
		{"ready 51s, min 51 (boundary <=)", mk(true, 51, false), 51, true},
		{"ready 51s, min 52", mk(true, 51, false), 52, false},
		{"nil pod", nil, 0, false},
		{"no conditions", readyPod(), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, IsAvailable(tt.pod, tt.minReadySeconds, now))
		})
	}
}

func TestMaxContainerRestarts(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	never := v1.ContainerRestartPolicy("Never")
	tests := []struct {
		name             string
		pod              *v1.Pod
		regular, sidecar int32
	}{
		{"nil", nil, 0, 0},
		{"no statuses", &v1.Pod{}, 0, 0},
		{"regular max", &v1.Pod{Status: v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{RestartCount: 3}, {RestartCount: 7}, {RestartCount: 1}}}}, 7, 0},
		{"negative reads as zero", &v1.Pod{Status: v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{RestartCount: -4}}}}, 0, 0},
		{"sidecar counted, plain init ignored", &v1.Pod{
			Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "side", RestartPolicy: &always}, {Name: "init"}, {Name: "other", RestartPolicy: &never}}},
			Status: v1.PodStatus{
				ContainerStatuses:     []v1.ContainerStatus{{RestartCount: 2}},
				InitContainerStatuses: []v1.ContainerStatus{{Name: "side", RestartCount: 5}, {Name: "init", RestartCount: 50}, {Name: "other", RestartCount: 60}},
			},
		}, 2, 5},
		{"sidecar status without spec entry ignored", &v1.Pod{
			Status: v1.PodStatus{InitContainerStatuses: []v1.ContainerStatus{{Name: "side", RestartCount: 5}}},
		}, 0, 0},
		{"ephemeral ignored", &v1.Pod{Status: v1.PodStatus{EphemeralContainerStatuses: []v1.ContainerStatus{{RestartCount: 9}}}}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, s := MaxContainerRestarts(tt.pod)
			assert.Equal(t, tt.regular, r, "regular")
			assert.Equal(t, tt.sidecar, s, "sidecar")
		})
	}
}

func TestKey(t *testing.T) {
	tests := []struct {
		name string
		pod  *v1.Pod
		want string
	}{
		{"nil", nil, ""},
		{"namespaced", &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pod1"}}, "default/pod1"},
		{"no namespace", &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod1"}}, "/pod1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, Key(tt.pod)) })
	}
}
