package podstate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestGetPodCondition(t *testing.T) {
	i, c := GetPodCondition(nil, v1.PodReady)
	assert.Equal(t, -1, i)
	assert.Nil(t, c)

	st := &v1.PodStatus{Conditions: []v1.PodCondition{
		{Type: v1.PodScheduled, Status: v1.ConditionTrue},
		{Type: v1.PodReady, Status: v1.ConditionFalse},
		{Type: v1.PodReady, Status: v1.ConditionTrue},
	}}
	i, c = GetPodCondition(st, v1.PodReady)
	require.Equal(t, 1, i)
	assert.Same(t, &st.Conditions[1], c, "the pointer aliases the first match")
	i, c = GetPodConditionFromList(st.Conditions, v1.ContainersReady)
	assert.Equal(t, -1, i)
	assert.Nil(t, c)
	assert.False(t, IsPodReadyConditionTrue(*st), "only the first Ready condition counts")
	st.Conditions[1].Status = v1.ConditionTrue
	assert.True(t, IsPodReadyConditionTrue(*st))
	assert.False(t, IsPodReadyConditionTrue(v1.PodStatus{}))
}

func TestUpdatePodConditionAt(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	st := &v1.PodStatus{}

	c := &v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse}
	assert.True(t, UpdatePodConditionAt(st, c, t0), "a new condition is a change")
	require.Len(t, st.Conditions, 1)
	assert.Equal(t, t0, st.Conditions[0].LastTransitionTime)

	c = &v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse}
	assert.False(t, UpdatePodConditionAt(st, c, t1), "same status, reason and message")
	assert.Equal(t, t0, c.LastTransitionTime, "an unchanged status keeps its transition time")

	c = &v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "Probe"}
	assert.True(t, UpdatePodConditionAt(st, c, t1), "a new reason is a change")
	assert.Equal(t, t0, st.Conditions[0].LastTransitionTime)

	c = &v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue}
	assert.True(t, UpdatePodConditionAt(st, c, t1))
	assert.Equal(t, t1, st.Conditions[0].LastTransitionTime, "a status change moves the transition time")
	require.Len(t, st.Conditions, 1)

	assert.Panics(t, func() { UpdatePodConditionAt(nil, c, t1) })
	assert.Panics(t, func() { UpdatePodCondition(st, nil) })
	before := time.Now().Add(-time.Second)
	assert.True(t, UpdatePodCondition(st, &v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionTrue}))
	assert.False(t, st.Conditions[1].LastTransitionTime.Time.Before(before), "UpdatePodCondition stamps the current time")
}

func TestContainerStatus(t *testing.T) {
	statuses := []v1.ContainerStatus{{Name: "a", RestartCount: 1}, {Name: "b", RestartCount: 2}, {Name: "b", RestartCount: 3}}
	s, ok := GetContainerStatus(statuses, "b")
	assert.True(t, ok)
	assert.Equal(t, int32(2), s.RestartCount, "the first status of a name wins")
	_, ok = GetContainerStatus(statuses, "c")
	assert.False(t, ok)
	assert.Equal(t, v1.ContainerStatus{}, GetExistingContainerStatus(statuses, "c"))
	assert.Equal(t, "a", GetExistingContainerStatus(statuses, "a").Name)
	assert.Equal(t, v1.ContainerStatus{}, GetExistingContainerStatus(nil, "a"))
}
