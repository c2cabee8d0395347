package status

import (
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// labelMap turns "k=v,k2=v2" into a map; entries without '=' become keys with
// empty values, so the fuzzer reaches that case too.
func labelMap(s string) map[string]string {
	if s == "" {
		return nil
	}
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// FuzzHasLabels checks the hand-rolled template match against the
// apimachinery equality selector upstream builds.
func FuzzHasLabels(f *testing.F) {
	for _, seed := range [][2]string{
		{"", ""}, {"a=1", ""}, {"", "a=1"}, {"a=1,b=2", "a=1"}, {"a=1", "a=1,b=2"},
		{"a=", "a="}, {"b=", "a="}, {"a=1", "a=2"}, {"name=foo,type=production", "name=foo"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, have, want string) {
		h, w := labelMap(have), labelMap(want)
		expected := labels.Set(w).AsSelectorPreValidated().Matches(labels.Set(h))
		if got := hasLabels(h, w); got != expected {
			t.Fatalf("hasLabels(%v, %v) = %v, selector says %v", h, w, got, expected)
		}
	})
}

// FuzzCalculateStatus builds pods from bytes and checks the invariants every
// status must hold, and that both kinds compute the same numbers and
// conditions.
func FuzzCalculateStatus(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3}, int32(2), int32(0), int64(0), true)
	f.Add([]byte{7, 7, 7}, int32(1), int32(30), int64(31), false)
	f.Add([]byte{}, int32(0), int32(10), int64(5), true)
	f.Add([]byte{255, 128, 64, 32, 16, 8, 4, 2, 1}, int32(-1), int32(-5), int64(1<<40), true)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, spec []byte, replicas, minReady int32, readyAgo int64, fail bool) {
		rs := &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, MinReadySeconds: minReady,
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "1"}}}}}
		var pods []*v1.Pod
		for _, b := range spec {
			if b == 255 {
				pods = append(pods, nil)
				continue
			}
			p := &v1.Pod{}
			if b&1 != 0 {
				p.Labels = map[string]string{"a": "1"}
			}
			switch (b >> 1) & 3 {
			case 1:
				p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue,
					LastTransitionTime: metav1.NewTime(now.Add(-time.Duration(readyAgo%(1<<32)) * time.Second))}}
			case 2:
				p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}}
			case 3:
				p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}
			}
			pods = append(pods, p)
		}
		var err error
		if fail {
			err = errors.New("fuzz failure")
		}
		st := CalculateReplicaSetStatus(rs, pods, pods, err, now, WithTerminatingReplicas())
		if st.Replicas < st.FullyLabeledReplicas || st.Replicas < st.ReadyReplicas || st.ReadyReplicas < st.AvailableReplicas || st.AvailableReplicas < 0 {
			t.Fatalf("inconsistent counts %+v", st)
		}
		if st.TerminatingReplicas == nil || *st.TerminatingReplicas != st.Replicas {
			t.Fatalf("terminating %v, want %d (same non-nil pods)", st.TerminatingReplicas, st.Replicas)
		}
		if hasFailure := GetCondition(st, appsv1.ReplicaSetReplicaFailure) != nil; hasFailure != fail || len(st.Conditions) > 1 {
			t.Fatalf("conditions %+v with error %v", st.Conditions, err)
		}
		rc := &v1.ReplicationController{Spec: v1.ReplicationControllerSpec{Replicas: &replicas, MinReadySeconds: minReady,
			Template: &rs.Spec.Template}}
		rcst := CalculateReplicationControllerStatus(rc, pods, err, now)
		st.TerminatingReplicas = nil
		if want := *rcStatusOf(&st); !equalRCStatus(want, rcst) {
			t.Fatalf("ReplicationController status %+v, ReplicaSet status %+v", rcst, st)
		}
	})
}

func equalRCStatus(a, b v1.ReplicationControllerStatus) bool {
	return a.Replicas == b.Replicas && a.FullyLabeledReplicas == b.FullyLabeledReplicas && a.ReadyReplicas == b.ReadyReplicas &&
		a.AvailableReplicas == b.AvailableReplicas && a.ObservedGeneration == b.ObservedGeneration &&
		conditionsEqual(a.Conditions, b.Conditions)
}
