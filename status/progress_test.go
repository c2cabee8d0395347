package status

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var progressNow = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

func progressing(status v1.ConditionStatus, reason string, updated, transitioned time.Time) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: status, Reason: reason, Message: "stored",
		LastUpdateTime: metav1.NewTime(updated), LastTransitionTime: metav1.NewTime(transitioned)}
}

func rolling(deadline int32) ProgressInput {
	return ProgressInput{Kind: "WorkerSet", Name: "web", RevisionKind: "ControllerRevision", Revision: "web-7d9",
		Desired: 3, DeadlineSeconds: &deadline,
		Previous: ProgressCounts{Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 3, AvailableReplicas: 3},
		Current:  ProgressCounts{Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 3, AvailableReplicas: 3}}
}

func progressOf(t *testing.T, conds []appsv1.DeploymentCondition) *appsv1.DeploymentCondition {
	t.Helper()
	var found *appsv1.DeploymentCondition
	for i := range conds {
		if conds[i].Type == appsv1.DeploymentProgressing {
			require.Nil(t, found, "two Progressing conditions")
			found = &conds[i]
		}
	}
	return found
}

func TestProgressRecordsProgressAndItsDeadline(t *testing.T) {
	hourAgo := progressNow.Add(-time.Hour)
	stored := []appsv1.DeploymentCondition{
		progressing(v1.ConditionTrue, ReasonRevisionUpdated, progressNow.Add(-time.Minute), hourAgo),
		{Type: appsv1.DeploymentAvailable, Status: v1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
	}
	before := append([]appsv1.DeploymentCondition(nil), stored...)

	// No step forward: the condition stays, and the deadline is looked at
	// again when it passes, and a second more.
	in := rolling(600)
	conds, recheck := Progress(stored, in, progressNow)
	assert.Equal(t, stored, conds)
	assert.Equal(t, 9*time.Minute+time.Second, recheck)

	// A step forward renews the update time and keeps the transition.
	in.Current.UpdatedReplicas = 2
	conds, recheck = Progress(stored, in, progressNow)
	got := progressOf(t, conds)
	require.NotNil(t, got)
	assert.Equal(t, ReasonRevisionUpdated, got.Reason)
	assert.Equal(t, `ControllerRevision "web-7d9" is progressing.`, got.Message)
	assert.Equal(t, progressNow, got.LastUpdateTime.Time)
	assert.Equal(t, hourAgo, got.LastTransitionTime.Time)
	assert.Equal(t, appsv1.DeploymentProgressing, conds[len(conds)-1].Type, "a changed condition goes last")
	assert.Equal(t, 10*time.Minute+time.Second, recheck)
	assert.Equal(t, before, stored, "the stored conditions are not changed")

	// Past the deadline with no step: exceeded, and no more rechecks.
	in = rolling(30)
	conds, recheck = Progress(stored, in, progressNow)
	got = progressOf(t, conds)
	assert.Equal(t, v1.ConditionFalse, got.Status)
	assert.Equal(t, ReasonProgressDeadlineExceeded, got.Reason)
	assert.Equal(t, `ControllerRevision "web-7d9" has timed out progressing.`, got.Message)
	assert.Equal(t, progressNow, got.LastTransitionTime.Time)
	assert.Zero(t, recheck)

	// Every replica updated and available: complete, and it stays so.
	in.Current = ProgressCounts{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3}
	conds, recheck = Progress(stored, in, progressNow)
	got = progressOf(t, conds)
	assert.Equal(t, ReasonNewRevisionAvailable, got.Reason)
	assert.Equal(t, v1.ConditionTrue, got.Status)
	assert.Equal(t, hourAgo, got.LastTransitionTime.Time, "still True")
	assert.Zero(t, recheck)
	again, _ := Progress(conds, in, progressNow.Add(time.Hour))
	assert.Equal(t, conds, again)
}

func TestProgressWithoutDeadlineRemovesTheCondition(t *testing.T) {
	stored := []appsv1.DeploymentCondition{progressing(v1.ConditionTrue, ReasonRevisionUpdated, progressNow, progressNow)}
	for _, in := range []ProgressInput{rolling(math.MaxInt32), {Kind: "WorkerSet", Name: "web"}} {
		conds, recheck := Progress(stored, in, progressNow)
		assert.Nil(t, conds)
		assert.Zero(t, recheck)
	}
}

func TestProgressRecordsTheUpdateRevision(t *testing.T) {
	in := rolling(600)
	conds, _ := Progress(nil, in, progressNow)
	got := progressOf(t, conds)
	assert.Equal(t, ReasonFoundNewRevision, got.Reason)
	assert.Equal(t, `Found new controller revision "web-7d9"`, got.Message)

	in.RevisionCreated = true
	conds, _ = Progress(conds, in, progressNow)
	got = progressOf(t, conds)
	assert.Equal(t, ReasonNewRevisionCreated, got.Reason)
	assert.Equal(t, `Created new controller revision "web-7d9"`, got.Message)
}

func TestProgressOfAPausedSet(t *testing.T) {
	in := rolling(600)
	in.Paused = true
	in.Current.UpdatedReplicas = 3 // a paused set is not checked for progress
	conds, recheck := Progress(nil, in, progressNow)
	got := progressOf(t, conds)
	assert.Equal(t, v1.ConditionUnknown, got.Status)
	assert.Equal(t, ReasonPaused, got.Reason)
	assert.Equal(t, "WorkerSet is paused", got.Message)
	assert.Zero(t, recheck)

	in.Paused = false
	in.Current.UpdatedReplicas = 1
	conds, _ = Progress(conds, in, progressNow)
	got = progressOf(t, conds)
	assert.Equal(t, ReasonResumed, got.Reason)
	assert.Equal(t, "WorkerSet is resumed", got.Message)

	// A deadline already exceeded is not overwritten by a pause.
	exceeded := []appsv1.DeploymentCondition{progressing(v1.ConditionFalse, ReasonProgressDeadlineExceeded, progressNow, progressNow)}
	in.Paused = true
	conds, _ = Progress(exceeded, in, progressNow)
	assert.Equal(t, exceeded, conds)
}

func TestSpaced(t *testing.T) {
	assert.Equal(t, "replica set", spaced("ReplicaSet"))
	assert.Equal(t, "controller revision", spaced("ControllerRevision"))
	assert.Equal(t, "pod", spaced("Pod"))
}
