package podset

import (
	"testing"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ctrlkit/ctrlkit/podstate"
)

// TestSplitByPhaseMatchesFilters checks the one-pass split against the two
// podstate filters it replaces: same pods, same order, nil for none.
func TestSplitByPhaseMatchesFilters(t *testing.T) {
	now := metav1.Now()
	mk := func(name string, phase v1.PodPhase, deleting bool) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.PodStatus{Phase: phase}}
		if deleting {
			p.DeletionTimestamp = &now
		}
		return p
	}
	running := mk("running", v1.PodRunning, false)
	pending := mk("pending", v1.PodPending, false)
	terminating := mk("terminating", v1.PodRunning, true)
	succeeded := mk("succeeded", v1.PodSucceeded, false)
	failedDeleting := mk("failed-deleting", v1.PodFailed, true)
	tests := []struct {
		name            string
		pods            []*v1.Pod
		wantActive      []*v1.Pod
		wantTerminating []*v1.Pod
	}{
		{name: "nil input"},
		{name: "only nil entries", pods: []*v1.Pod{nil, nil}},
		{name: "only terminal pods", pods: []*v1.Pod{succeeded, failedDeleting}},
		{name: "mixed, order kept, nils dropped",
			pods:            []*v1.Pod{terminating, nil, running, succeeded, pending, failedDeleting, terminating},
			wantActive:      []*v1.Pod{running, pending},
			wantTerminating: []*v1.Pod{terminating, terminating}},
		{name: "active only", pods: []*v1.Pod{pending, running}, wantActive: []*v1.Pod{pending, running}},
		{name: "active run, then others",
			pods:            []*v1.Pod{running, pending, terminating, running, nil, succeeded, pending},
			wantActive:      []*v1.Pod{running, pending, running, pending},
			wantTerminating: []*v1.Pod{terminating}},
		{name: "active run, then a nil", pods: []*v1.Pod{running, nil}, wantActive: []*v1.Pod{running}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			active, term := splitByPhase(tc.pods)
			assert.Equal(t, tc.wantActive, active)
			assert.Equal(t, tc.wantTerminating, term)
			assert.Equal(t, podstate.FilterActive(tc.pods), active, "agrees with FilterActive")
			assert.Equal(t, podstate.FilterTerminating(tc.pods), term, "agrees with FilterTerminating")
		})
	}
	t.Run("all active shares the input and cannot grow into it", func(t *testing.T) {
		pods := []*v1.Pod{running, pending, running}
		active, term := splitByPhase(pods[:2])
		assert.Nil(t, term)
		assert.Same(t, &pods[0], &active[0], "no copy in the steady state")
		assert.Equal(t, 2, cap(active))
		active = append(active, pending)
		assert.Same(t, running, pods[2], "appending to the result leaves the input alone")
		assert.Len(t, active, 3)
	})
}
