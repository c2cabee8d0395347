package status

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func pod(lbls map[string]string, ready v1.ConditionStatus, readySince time.Time) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: lbls}}
	if ready != "" {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: ready, LastTransitionTime: metav1.NewTime(readySince)}}
	}
	return p
}

func TestCountReplicas(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tmpl := map[string]string{"app": "web", "tier": "front"}
	full := map[string]string{"app": "web", "tier": "front", "extra": "x"}
	partial := map[string]string{"app": "web"}
	// More labels than CountReplicas keeps on the stack.
	big, bigMinusOne := map[string]string{}, map[string]string{}
	for i := range 10 {
		big[fmt.Sprintf("k%d", i)] = fmt.Sprintf("v%d", i)
		if i > 0 {
			bigMinusOne[fmt.Sprintf("k%d", i)] = fmt.Sprintf("v%d", i)
		}
	}
	bigMinusOne["extra"] = "x"
	tests := []struct {
		name     string
		pods     []*v1.Pod
		template map[string]string
		minReady int32
		want     ReplicaCounts
	}{
		{name: "no pods", template: tmpl},
		{name: "superset labels are fully labelled", template: tmpl,
			pods: []*v1.Pod{pod(full, "", now), pod(partial, "", now), pod(nil, "", now)},
			want: ReplicaCounts{Replicas: 3, FullyLabeledReplicas: 1}},
		{name: "empty template matches every pod", template: nil,
			pods: []*v1.Pod{pod(full, "", now), pod(nil, "", now)},
			want: ReplicaCounts{Replicas: 2, FullyLabeledReplicas: 2}},
		{name: "template label with empty value needs the key", template: map[string]string{"k": ""},
			pods: []*v1.Pod{pod(map[string]string{"k": ""}, "", now), pod(map[string]string{"j": ""}, "", now)},
			want: ReplicaCounts{Replicas: 2, FullyLabeledReplicas: 1}},
		{name: "ready False and Unknown are not ready", template: tmpl,
			pods: []*v1.Pod{pod(full, v1.ConditionFalse, now), pod(full, v1.ConditionUnknown, now), pod(full, v1.ConditionTrue, now)},
			want: ReplicaCounts{Replicas: 3, FullyLabeledReplicas: 3, ReadyReplicas: 1, AvailableReplicas: 1}},
		{name: "availability uses one now and the inclusive boundary", template: tmpl, minReady: 10,
			pods: []*v1.Pod{
				pod(full, v1.ConditionTrue, now.Add(-10*time.Second)),
				pod(full, v1.ConditionTrue, now.Add(-9*time.Second)),
				pod(full, v1.ConditionTrue, now.Add(-time.Hour)),
				pod(full, v1.ConditionFalse, now.Add(-time.Hour)),
			},
			want: ReplicaCounts{Replicas: 4, FullyLabeledReplicas: 4, ReadyReplicas: 3, AvailableReplicas: 2}},
		{name: "template with many labels", template: big,
			pods: []*v1.Pod{pod(big, "", now), pod(bigMinusOne, "", now), pod(full, "", now)},
			want: ReplicaCounts{Replicas: 3, FullyLabeledReplicas: 1}},
		{name: "nil entries are skipped", template: tmpl,
			pods: []*v1.Pod{nil, pod(full, v1.ConditionTrue, now), nil},
			want: ReplicaCounts{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, CountReplicas(tc.pods, tc.template, tc.minReady, now))
			c := NewReplicaCounter(tc.template, tc.minReady, now)
			for _, p := range tc.pods {
				c.Add(p)
			}
			assert.Equal(t, tc.want, c.Counts(), "ReplicaCounter, one pod at a time")
		})
	}
}

func TestHasLabelsMatchesEqualitySelector(t *testing.T) {
	tests := []struct {
		name       string
		have, want map[string]string
		match      bool
	}{
		{"both empty", nil, nil, true},
		{"empty want", map[string]string{"a": "1"}, map[string]string{}, true},
		{"missing key", map[string]string{"a": "1"}, map[string]string{"b": "1"}, false},
		{"wrong value", map[string]string{"a": "1"}, map[string]string{"a": "2"}, false},
		{"empty value present", map[string]string{"a": ""}, map[string]string{"a": ""}, true},
		{"empty value absent", nil, map[string]string{"a": ""}, false},
		{"superset", map[string]string{"a": "1", "b": "2"}, map[string]string{"a": "1"}, true},
		{"subset", map[string]string{"a": "1"}, map[string]string{"a": "1", "b": "2"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.match, hasLabels(tc.have, tc.want))
			sel := labels.Set(tc.want).AsSelectorPreValidated()
			assert.Equal(t, sel.Matches(labels.Set(tc.have)), hasLabels(tc.have, tc.want), "agrees with the apimachinery selector")
		})
	}
}
