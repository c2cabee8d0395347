package podset

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/ctrlkit/ctrlkit/status"
)

// TestClaimPodsOnePass checks the one-pass claim against the steps it
// replaces: podstate.FilterActive, a claim of the active pods, the terminating
// pods the owner controls, and status.CountReplicas over the result. Same
// pods, same order, nil for none.
func TestClaimPodsOnePass(t *testing.T) {
	rs := newRS("foobar", 3, fooBar)
	other := newRS("other", 3, fooBar)
	now := metav1.Now()
	mk := func(name string, phase v1.PodPhase, deleting bool, owner bool) *v1.Pod {
		p := newPod(name, rs, phase, fooBar, owner)
		if deleting {
			p.DeletionTimestamp = &now
		}
		return p
	}
	running := mk("running", v1.PodRunning, false, true)
	pending := mk("pending", v1.PodPending, false, true)
	terminating := mk("terminating", v1.PodRunning, true, true)
	succeeded := mk("succeeded", v1.PodSucceeded, false, true)
	failedDeleting := mk("failed-deleting", v1.PodFailed, true, true)
	othersRunning := newPod("others-running", other, v1.PodRunning, fooBar, true)
	othersTerminating := newPod("others-terminating", other, v1.PodRunning, fooBar, true)
	othersTerminating.DeletionTimestamp = &now
	unlabelled := newPod("unlabelled-terminating", rs, v1.PodRunning, map[string]string{"foo": "baz"}, true)
	unlabelled.DeletionTimestamp = &now
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
		{name: "others' pods and unselected terminating pods are left out",
			pods:            []*v1.Pod{othersRunning, running, othersTerminating, unlabelled, terminating, pending},
			wantActive:      []*v1.Pod{running, pending},
			wantTerminating: []*v1.Pod{terminating}},
	}
	selector := labels.SelectorFromSet(fooBar)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			in := append([]*v1.Pod(nil), tc.pods...)
			counter := status.NewReplicaCounter(rs.Spec.Template.Labels, 0, time.Time{})
			active, term, err := e.c.claimPods(e.ctx, rs, selector, in, true, &counter)
			require.NoError(t, err)
			assert.Equal(t, tc.wantActive, active)
			assert.Equal(t, tc.wantTerminating, term)
			assert.Equal(t, status.CountReplicas(tc.wantActive, rs.Spec.Template.Labels, 0, time.Now()), counter.Counts(),
				"counted as CountReplicas counts the result")
			if len(active) > 0 {
				assert.Same(t, &in[0], &active[0], "gathered in place")
				assert.Equal(t, len(active), cap(active), "appending to the result cannot overwrite the input")
			}
			e.requireCounts(0, 0, 0)

			_, term, err = e.c.claimPods(e.ctx, rs, selector, append([]*v1.Pod(nil), tc.pods...), false, nil)
			require.NoError(t, err)
			assert.Nil(t, term, "terminating pods are not gathered without the gate")
		})
	}

	t.Run("claims only active pods, and keeps claiming after an error", func(t *testing.T) {
		e := newEnv(t, []runtime.Object{rs})
		e.pc.PatchErr = errors.New("patch refused")
		orphan := newPod("orphan", rs, v1.PodRunning, fooBar, false)
		orphanTerminating := newPod("orphan-terminating", rs, v1.PodRunning, fooBar, false)
		orphanTerminating.DeletionTimestamp = &now
		stray := newPod("stray", rs, v1.PodRunning, map[string]string{"foo": "baz"}, true)
		active, term, err := e.c.claimPods(e.ctx, rs, selector, []*v1.Pod{orphan, orphanTerminating, running, stray}, true, nil)
		require.Error(t, err)
		assert.ErrorContains(t, err, "patch refused")
		assert.Len(t, err.(utilerrors.Aggregate).Errors(), 2, "one error per failed pod, as upstream aggregates them")
		assert.Nil(t, active)
		assert.Nil(t, term)
		// The adoption failed, the release after it was still sent, and the
		// terminating orphan was left alone.
		assert.Equal(t, []string{"default/orphan", "default/stray"}, e.pc.PatchedPods)
	})
}
