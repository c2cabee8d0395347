package childset_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/status"
)

func (e *rollEnv) setReplicas(n int32) {
	e.t.Helper()
	e.owner = e.owner.DeepCopy()
	e.owner.Generation++
	e.owner.Spec.Replicas = &n
	require.NoError(e.t, e.owners.Update(e.owner))
}

// progressingOf is the Progressing condition of the last status written.
func (e *rollEnv) progressingOf() *appsv1.DeploymentCondition {
	for _, c := range e.spec.last().Conditions {
		if c.Type == appsv1.DeploymentProgressing {
			return &c
		}
	}
	return nil
}

// A paused owner scales, at the current revision, and replaces no child;
// resumed, it rolls out.
func TestRolloutPausedScalesWithoutRolling(t *testing.T) {
	e := newRollEnv(t, 4, childset.RollingUpdate{MaxSurge: num(1), MaxUnavailable: num(0)})
	e.settle()
	old := revisionHashOf(e.spec.last().UpdateRevision)
	e.spec.paused = true
	e.setVersion("v2")
	e.setReplicas(6)
	for range 10 {
		e.reconcile("web")
		e.catchUp()
		e.becomeReady(e.apiNames())
		e.clock.Step(5 * time.Second)
		e.catchUp()
	}
	assert.Equal(t, map[string]int{old: 6}, e.hashes(), "scaled up at the current revision, none replaced")
	for _, cm := range e.apiChildren() {
		assert.Equal(t, "v1", cm.Data["version"], cm.Name)
	}
	st := e.spec.last()
	assert.Zero(t, st.UpdatedReplicas)
	assert.NotEqual(t, st.CurrentRevision, st.UpdateRevision, "the new template is recorded")

	e.spec.paused = false
	e.setReplicas(6) // a new generation, as an edit of spec.paused makes
	e.settle()
	assert.Equal(t, map[string]int{revisionHashOf(st.UpdateRevision): 6}, e.hashes())
}

// With a deadline, the owner's Progressing condition follows the rollout
// as a Deployment's does, and the owner is synced again when the deadline
// passes: a rollout that stops is reported stuck, and one that finishes
// complete.
func TestRolloutProgressDeadline(t *testing.T) {
	e := newRollEnv(t, 3, childset.RollingUpdate{MaxSurge: num(1), MaxUnavailable: num(0)})
	e.spec.deadline = new(int32(30))
	e.settle()
	require.NotNil(t, e.progressingOf())
	assert.Equal(t, status.ReasonNewRevisionAvailable, e.progressingOf().Reason)

	e.setVersion("v2")
	e.reconcile("web") // records the revision and creates one child at v2
	got := e.progressingOf()
	require.NotNil(t, got)
	assert.Equal(t, status.ReasonNewRevisionCreated, got.Reason)
	assert.Equal(t, v1.ConditionTrue, got.Status)
	e.catchUp()
	res := e.reconcile("web") // the new child counts as a step forward
	assert.Equal(t, status.ReasonRevisionUpdated, e.progressingOf().Reason)
	assert.Equal(t, 31*time.Second, res.RequeueAfter, "the deadline and a second")

	// The new child never becomes ready: no step forward for 30 seconds.
	e.clock.Step(20 * time.Second)
	res = e.reconcile("web")
	assert.Equal(t, status.ReasonRevisionUpdated, e.progressingOf().Reason)
	assert.Equal(t, 11*time.Second, res.RequeueAfter)
	e.clock.Step(11 * time.Second)
	res = e.reconcile("web")
	got = e.progressingOf()
	assert.Equal(t, v1.ConditionFalse, got.Status)
	assert.Equal(t, status.ReasonProgressDeadlineExceeded, got.Reason)
	assert.Zero(t, res.RequeueAfter)

	// It does finish once the children become ready.
	e.settle()
	got = e.progressingOf()
	assert.Equal(t, v1.ConditionTrue, got.Status)
	assert.Equal(t, status.ReasonNewRevisionAvailable, got.Reason)
}
