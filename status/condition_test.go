package status

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const imagePullBackOff appsv1.ReplicaSetConditionType = "ImagePullBackOff"

func rsCond(t appsv1.ReplicaSetConditionType, reason string) appsv1.ReplicaSetCondition {
	return appsv1.ReplicaSetCondition{Type: t, Status: v1.ConditionTrue, Reason: reason}
}

var (
	condImagePullBackOff = func() appsv1.ReplicaSetCondition { return rsCond(imagePullBackOff, "NonExistentImage") }
	condReplicaFailure   = func() appsv1.ReplicaSetCondition { return rsCond(appsv1.ReplicaSetReplicaFailure, "OtherFailure") }
	condReplicaFailure2  = func() appsv1.ReplicaSetCondition { return rsCond(appsv1.ReplicaSetReplicaFailure, "AnotherFailure") }
	exampleStatus        = func() *appsv1.ReplicaSetStatus {
		return &appsv1.ReplicaSetStatus{Conditions: []appsv1.ReplicaSetCondition{condReplicaFailure()}}
	}
)

// rcStatusOf mirrors a ReplicaSet status as a ReplicationController status,
// so one table checks that both kinds follow the same rules.
func rcStatusOf(s *appsv1.ReplicaSetStatus) *v1.ReplicationControllerStatus {
	if s == nil {
		return nil
	}
	out := &v1.ReplicationControllerStatus{Replicas: s.Replicas, FullyLabeledReplicas: s.FullyLabeledReplicas,
		ReadyReplicas: s.ReadyReplicas, AvailableReplicas: s.AvailableReplicas, ObservedGeneration: s.ObservedGeneration}
	if s.Conditions != nil {
		out.Conditions = make([]v1.ReplicationControllerCondition, 0, len(s.Conditions))
		for _, c := range s.Conditions {
			out.Conditions = append(out.Conditions, rcCondOf(c))
		}
	}
	return out
}

func rcCondOf(c appsv1.ReplicaSetCondition) v1.ReplicationControllerCondition {
	return v1.ReplicationControllerCondition{Type: v1.ReplicationControllerConditionType(c.Type), Status: c.Status,
		LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message}
}

func TestGetCondition(t *testing.T) {
	tests := []struct {
		name     string
		status   appsv1.ReplicaSetStatus
		condType appsv1.ReplicaSetConditionType
		want     *appsv1.ReplicaSetCondition
	}{
		{name: "condition exists", status: *exampleStatus(), condType: appsv1.ReplicaSetReplicaFailure, want: ptrTo(condReplicaFailure())},
		{name: "condition does not exist", status: *exampleStatus(), condType: imagePullBackOff},
		{name: "empty status", condType: appsv1.ReplicaSetReplicaFailure},
		{name: "first of duplicates wins", condType: appsv1.ReplicaSetReplicaFailure, want: ptrTo(condReplicaFailure()),
			status: appsv1.ReplicaSetStatus{Conditions: []appsv1.ReplicaSetCondition{condImagePullBackOff(), condReplicaFailure(), condReplicaFailure2()}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, GetCondition(tc.status, tc.condType))
			var wantRC *v1.ReplicationControllerCondition
			if tc.want != nil {
				wantRC = ptrTo(rcCondOf(*tc.want))
			}
			assert.Equal(t, wantRC, GetReplicationControllerCondition(*rcStatusOf(&tc.status), v1.ReplicationControllerConditionType(tc.condType)))
		})
	}
}

func TestGetConditionReturnsACopy(t *testing.T) {
	st := exampleStatus()
	c := GetCondition(*st, appsv1.ReplicaSetReplicaFailure)
	require.NotNil(t, c)
	c.Reason = "Changed"
	assert.Equal(t, "OtherFailure", st.Conditions[0].Reason)

	rc := rcStatusOf(st)
	rcc := GetReplicationControllerCondition(*rc, v1.ReplicationControllerReplicaFailure)
	require.NotNil(t, rcc)
	rcc.Reason = "Changed"
	assert.Equal(t, "OtherFailure", rc.Conditions[0].Reason)
}

func TestSetCondition(t *testing.T) {
	tests := []struct {
		name   string
		status *appsv1.ReplicaSetStatus
		cond   appsv1.ReplicaSetCondition
		want   *appsv1.ReplicaSetStatus
	}{
		{name: "set for the first time", status: &appsv1.ReplicaSetStatus{}, cond: condReplicaFailure(),
			want: &appsv1.ReplicaSetStatus{Conditions: []appsv1.ReplicaSetCondition{condReplicaFailure()}}},
		{name: "simple set", status: &appsv1.ReplicaSetStatus{Conditions: []appsv1.ReplicaSetCondition{condImagePullBackOff()}}, cond: condReplicaFailure(),
			want: &appsv1.ReplicaSetStatus{Conditions: []appsv1.ReplicaSetCondition{condImagePullBackOff(), condReplicaFailure()}}},
		{name: "overwrite", status: &appsv1.ReplicaSetStatus{Conditions: []appsv1.ReplicaSetCondition{condReplicaFailure()}}, cond: condReplicaFailure2(),
			want: &appsv1.ReplicaSetStatus{Conditions: []appsv1.ReplicaSetCondition{condReplicaFailure2()}}},
		{name: "overwrite moves the condition last and drops duplicates",
			status: &appsv1.ReplicaSetStatus{Conditions: []appsv1.ReplicaSetCondition{condReplicaFailure(), condImagePullBackOff(), condReplicaFailure()}},
			cond:   condReplicaFailure2(),
			want:   &appsv1.ReplicaSetStatus{Conditions: []appsv1.ReplicaSetCondition{condImagePullBackOff(), condReplicaFailure2()}}},
		{name: "same status and reason keeps message and time",
			status: &appsv1.ReplicaSetStatus{Conditions: []appsv1.ReplicaSetCondition{withTime(condReplicaFailure(), 100, "old")}},
			cond:   withTime(condReplicaFailure(), 200, "new"),
			want:   &appsv1.ReplicaSetStatus{Conditions: []appsv1.ReplicaSetCondition{withTime(condReplicaFailure(), 100, "old")}}},
		{name: "new status replaces",
			status: &appsv1.ReplicaSetStatus{Conditions: []appsv1.ReplicaSetCondition{withTime(condReplicaFailure(), 100, "old")}},
			cond:   withStatus(withTime(condReplicaFailure(), 200, "new"), v1.ConditionFalse),
			want:   &appsv1.ReplicaSetStatus{Conditions: []appsv1.ReplicaSetCondition{withStatus(withTime(condReplicaFailure(), 200, "new"), v1.ConditionFalse)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc, wantRC := rcStatusOf(tc.status), rcStatusOf(tc.want)
			SetCondition(tc.status, tc.cond)
			assert.Equal(t, tc.want, tc.status)
			SetReplicationControllerCondition(rc, rcCondOf(tc.cond))
			assert.Equal(t, wantRC, rc)
		})
	}
}

// TestSetConditionDoesNotAlias: the new list never shares a backing array
// with the old one, so copies of the old status don't see the change.
func TestSetConditionDoesNotAlias(t *testing.T) {
	backing := make([]appsv1.ReplicaSetCondition, 1, 4)
	backing[0] = condImagePullBackOff()
	orig := appsv1.ReplicaSetStatus{Conditions: backing}
	st := orig
	SetCondition(&st, condReplicaFailure())
	require.Len(t, st.Conditions, 2)
	st.Conditions[0].Reason = "Mutated"
	assert.Equal(t, "NonExistentImage", orig.Conditions[0].Reason)
	assert.Equal(t, appsv1.ReplicaSetCondition{}, backing[:2][1], "no write past the old length")
}

func TestRemoveCondition(t *testing.T) {
	tests := []struct {
		name     string
		status   *appsv1.ReplicaSetStatus
		condType appsv1.ReplicaSetConditionType
		want     *appsv1.ReplicaSetStatus
	}{
		{name: "remove from empty status", status: &appsv1.ReplicaSetStatus{}, condType: appsv1.ReplicaSetReplicaFailure, want: &appsv1.ReplicaSetStatus{}},
		{name: "remove from an empty non-nil list leaves nil", status: &appsv1.ReplicaSetStatus{Conditions: []appsv1.ReplicaSetCondition{}},
			condType: appsv1.ReplicaSetReplicaFailure, want: &appsv1.ReplicaSetStatus{}},
		{name: "simple remove", status: exampleStatus(), condType: appsv1.ReplicaSetReplicaFailure, want: &appsv1.ReplicaSetStatus{}},
		{name: "doesn't remove anything", status: exampleStatus(), condType: imagePullBackOff, want: exampleStatus()},
		{name: "removes every duplicate and keeps order",
			status:   &appsv1.ReplicaSetStatus{Conditions: []appsv1.ReplicaSetCondition{condReplicaFailure(), condImagePullBackOff(), condReplicaFailure2(), rsCond("Other", "x")}},
			condType: appsv1.ReplicaSetReplicaFailure,
			want:     &appsv1.ReplicaSetStatus{Conditions: []appsv1.ReplicaSetCondition{condImagePullBackOff(), rsCond("Other", "x")}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc, wantRC := rcStatusOf(tc.status), rcStatusOf(tc.want)
			RemoveCondition(tc.status, tc.condType)
			assert.Equal(t, tc.want, tc.status)
			if tc.want.Conditions == nil {
				assert.Nil(t, tc.status.Conditions, "nil, not an empty slice")
			}
			RemoveReplicationControllerCondition(rc, v1.ReplicationControllerConditionType(tc.condType))
			assert.Equal(t, wantRC, rc)
		})
	}
}

func TestNewCondition(t *testing.T) {
	before := time.Now().Add(-time.Second)
	rs := NewReplicaSetCondition(appsv1.ReplicaSetReplicaFailure, v1.ConditionTrue, ReasonFailedCreate, "boom")
	rc := NewReplicationControllerCondition(v1.ReplicationControllerReplicaFailure, v1.ConditionFalse, ReasonFailedDelete, "bang")
	after := time.Now().Add(time.Second)

	assert.Equal(t, appsv1.ReplicaSetReplicaFailure, rs.Type)
	assert.Equal(t, v1.ConditionTrue, rs.Status)
	assert.Equal(t, ReasonFailedCreate, rs.Reason)
	assert.Equal(t, "boom", rs.Message)
	assert.WithinRange(t, rs.LastTransitionTime.Time, before, after)

	assert.Equal(t, v1.ReplicationControllerReplicaFailure, rc.Type)
	assert.Equal(t, v1.ConditionFalse, rc.Status)
	assert.Equal(t, ReasonFailedDelete, rc.Reason)
	assert.Equal(t, "bang", rc.Message)
	assert.WithinRange(t, rc.LastTransitionTime.Time, before, after)
}

func TestConditionsEqual(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	// Same instant and same zone contents behind a different *Location: ==
	// says no, reflect.DeepEqual says yes, and so must conditionsEqual.
	zoneA, zoneB := time.FixedZone("X", 3600), time.FixedZone("X", 3600)
	withZone := func(z *time.Location) []appsv1.ReplicaSetCondition {
		c := condReplicaFailure()
		c.LastTransitionTime = metav1.NewTime(at.In(z))
		return []appsv1.ReplicaSetCondition{c}
	}
	tests := []struct {
		name string
		a, b []appsv1.ReplicaSetCondition
		want bool
	}{
		{"both nil", nil, nil, true},
		{"nil and empty", nil, []appsv1.ReplicaSetCondition{}, false},
		{"equal", []appsv1.ReplicaSetCondition{condReplicaFailure()}, []appsv1.ReplicaSetCondition{condReplicaFailure()}, true},
		{"reason differs", []appsv1.ReplicaSetCondition{condReplicaFailure()}, []appsv1.ReplicaSetCondition{condReplicaFailure2()}, false},
		{"length differs", []appsv1.ReplicaSetCondition{condReplicaFailure()}, nil, false},
		{"equal zones behind different pointers", withZone(zoneA), withZone(zoneB), true},
		{"different zones", withZone(zoneA), withZone(time.UTC), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, conditionsEqual(tc.a, tc.b))
			assert.Equal(t, reflect.DeepEqual(tc.a, tc.b), conditionsEqual(tc.a, tc.b),
				"agrees with reflect.DeepEqual")
		})
	}
}

func withTime(c appsv1.ReplicaSetCondition, sec int64, msg string) appsv1.ReplicaSetCondition {
	c.LastTransitionTime = metav1.NewTime(time.Unix(sec, 0))
	c.Message = msg
	return c
}

func withStatus(c appsv1.ReplicaSetCondition, s v1.ConditionStatus) appsv1.ReplicaSetCondition {
	c.Status = s
	return c
}

func ptrTo[T any](v T) *T { return &v }
