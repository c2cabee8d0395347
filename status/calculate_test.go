package status

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// newReplicaSet mirrors upstream's fixture: the selector is given, the
// template labels are always {name: foo, type: production}.
func newReplicaSet(replicas int32, selector map[string]string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "foobar", Namespace: metav1.NamespaceDefault, UID: "rs-uid", ResourceVersion: "18"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"name": "foo", "type": "production"}}},
		},
	}
}

// rcOf is the ReplicationController twin of rs: same replicas, selector,
// template, minReadySeconds and status (without terminatingReplicas).
func rcOf(rs *appsv1.ReplicaSet) *v1.ReplicationController {
	tmpl := rs.Spec.Template.DeepCopy()
	return &v1.ReplicationController{
		ObjectMeta: *rs.ObjectMeta.DeepCopy(),
		Spec: v1.ReplicationControllerSpec{Replicas: rs.Spec.Replicas, MinReadySeconds: rs.Spec.MinReadySeconds,
			Selector: rs.Spec.Selector.MatchLabels, Template: tmpl},
		Status: *rcStatusOf(&rs.Status),
	}
}

// newPod mirrors upstream's fixture: labels are the RS selector; a Running pod
// gets Ready=True with the given transition time (zero when nil).
func newPod(name string, rs *appsv1.ReplicaSet, phase v1.PodPhase, readySince *metav1.Time) *v1.Pod {
	var conds []v1.PodCondition
	if phase == v1.PodRunning {
		c := v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue}
		if readySince != nil {
			c.LastTransitionTime = *readySince
		}
		conds = append(conds, c)
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: rs.Namespace, Labels: rs.Spec.Selector.MatchLabels},
		Status:     v1.PodStatus{Phase: phase, Conditions: conds},
	}
}

func asTerminating(p *v1.Pod) *v1.Pod {
	p.DeletionTimestamp = ptr.To(metav1.Now())
	return p
}

// TestCalculateStatus covers upstream's TestCalculateStatus cases (§7.3) for
// ReplicaSets and, through the same table, ReplicationControllers.
func TestCalculateStatus(t *testing.T) {
	labelMap := map[string]string{"name": "foo"}
	fullLabelMap := map[string]string{"name": "foo", "type": "production"}
	notFullyLabelledRS := newReplicaSet(1, labelMap)
	fullyLabelledRS := newReplicaSet(2, fullLabelMap)
	const longMinReadySeconds = 3600
	longMinReadySecondsRS := newReplicaSet(1, fullLabelMap)
	longMinReadySecondsRS.Spec.MinReadySeconds = longMinReadySeconds
	now := time.Now()
	ago := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(-d)} }

	tests := []struct {
		name            string
		terminatingOpt  bool
		rs              *appsv1.ReplicaSet
		activePods      []*v1.Pod
		terminatingPods []*v1.Pod
		want            appsv1.ReplicaSetStatus
	}{
		{name: "1 fully labelled pod", rs: fullyLabelledRS,
			activePods: []*v1.Pod{newPod("pod1", fullyLabelledRS, v1.PodRunning, nil)},
			want:       appsv1.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}},
		{name: "1 not fully labelled pod", rs: notFullyLabelledRS,
			activePods: []*v1.Pod{newPod("pod1", notFullyLabelledRS, v1.PodRunning, nil)},
			want:       appsv1.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 0, ReadyReplicas: 1, AvailableReplicas: 1}},
		{name: "2 fully labelled pods", rs: fullyLabelledRS,
			activePods: []*v1.Pod{newPod("pod1", fullyLabelledRS, v1.PodRunning, nil), newPod("pod2", fullyLabelledRS, v1.PodRunning, nil)},
			want:       appsv1.ReplicaSetStatus{Replicas: 2, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}},
		{name: "2 fully labelled pods with terminating replicas", terminatingOpt: true, rs: fullyLabelledRS,
			activePods: []*v1.Pod{newPod("pod1", fullyLabelledRS, v1.PodRunning, nil), newPod("pod2", fullyLabelledRS, v1.PodRunning, nil)},
			want:       appsv1.ReplicaSetStatus{Replicas: 2, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, TerminatingReplicas: ptr.To[int32](0)}},
		{name: "2 not fully labelled pods", rs: notFullyLabelledRS,
			activePods: []*v1.Pod{newPod("pod1", notFullyLabelledRS, v1.PodRunning, nil), newPod("pod2", notFullyLabelledRS, v1.PodRunning, nil)},
			want:       appsv1.ReplicaSetStatus{Replicas: 2, FullyLabeledReplicas: 0, ReadyReplicas: 2, AvailableReplicas: 2}},
		{name: "1 fully labelled pod, 1 not fully labelled pod", rs: notFullyLabelledRS,
			activePods: []*v1.Pod{newPod("pod1", notFullyLabelledRS, v1.PodRunning, nil), newPod("pod2", fullyLabelledRS, v1.PodRunning, nil)},
			want:       appsv1.ReplicaSetStatus{Replicas: 2, FullyLabeledReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2}},
		{name: "1 non-ready pod", rs: fullyLabelledRS,
			activePods: []*v1.Pod{newPod("pod1", fullyLabelledRS, v1.PodPending, nil)},
			want:       appsv1.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 0, AvailableReplicas: 0}},
		{name: "1 ready but non-available pod", rs: longMinReadySecondsRS,
			activePods: []*v1.Pod{newPod("pod1", longMinReadySecondsRS, v1.PodRunning, ago(0))},
			want:       appsv1.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 0}},
		{name: "1 ready pod with zero transition time is not available", rs: longMinReadySecondsRS,
			activePods: []*v1.Pod{newPod("pod1", longMinReadySecondsRS, v1.PodRunning, nil)},
			want:       appsv1.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 0}},
		{name: "1 available pod with minReadySeconds (boundary)", rs: longMinReadySecondsRS,
			activePods: []*v1.Pod{newPod("pod1", longMinReadySecondsRS, v1.PodRunning, ago(longMinReadySeconds*time.Second))},
			want:       appsv1.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}},
		{name: "1 pod one second short of available", rs: longMinReadySecondsRS,
			activePods: []*v1.Pod{newPod("pod1", longMinReadySecondsRS, v1.PodRunning, ago((longMinReadySeconds-1)*time.Second))},
			want:       appsv1.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 0}},
		{name: "1 available pod for a long time with minReadySeconds", rs: longMinReadySecondsRS,
			activePods: []*v1.Pod{newPod("pod1", longMinReadySecondsRS, v1.PodRunning, ago(2*longMinReadySeconds*time.Second))},
			want:       appsv1.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}},
		{name: "1 fully labelled pod and 1 terminating without terminating replicas", rs: fullyLabelledRS,
			activePods:      []*v1.Pod{newPod("pod1", fullyLabelledRS, v1.PodRunning, nil)},
			terminatingPods: []*v1.Pod{asTerminating(newPod("pod2", fullyLabelledRS, v1.PodRunning, nil))},
			want:            appsv1.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}},
		{name: "1 fully labelled pods and 2 terminating with terminating replicas", terminatingOpt: true, rs: fullyLabelledRS,
			activePods: []*v1.Pod{newPod("pod1", fullyLabelledRS, v1.PodRunning, nil)},
			terminatingPods: []*v1.Pod{asTerminating(newPod("pod2", fullyLabelledRS, v1.PodRunning, nil)),
				asTerminating(newPod("pod3", fullyLabelledRS, v1.PodRunning, nil))},
			want: appsv1.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, TerminatingReplicas: ptr.To[int32](2)}},
		{name: "nil pods are skipped", terminatingOpt: true, rs: fullyLabelledRS,
			activePods:      []*v1.Pod{nil, newPod("pod1", fullyLabelledRS, v1.PodRunning, nil), nil},
			terminatingPods: []*v1.Pod{nil},
			want:            appsv1.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, TerminatingReplicas: ptr.To[int32](0)}},
		{name: "no pods", rs: fullyLabelledRS, want: appsv1.ReplicaSetStatus{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts []Option
			if tc.terminatingOpt {
				opts = append(opts, WithTerminatingReplicas())
			}
			got := CalculateReplicaSetStatus(tc.rs, tc.activePods, tc.terminatingPods, nil, now, opts...)
			assert.Equal(t, tc.want, got)

			gotRC := CalculateReplicationControllerStatus(rcOf(tc.rs), tc.activePods, nil, now)
			assert.Equal(t, *rcStatusOf(&tc.want), gotRC, "ReplicationController")

			// Counts made beforehand give the same status, and the pods are
			// then not read: nil entries in their place change nothing.
			counts := CountReplicas(tc.activePods, tc.rs.Spec.Template.Labels, tc.rs.Spec.MinReadySeconds, now)
			withCounts := append(slices.Clip(opts), WithReplicaCounts(counts))
			got = CalculateReplicaSetStatus(tc.rs, make([]*v1.Pod, len(tc.activePods)), tc.terminatingPods, nil, now, withCounts...)
			assert.Equal(t, tc.want, got, "WithReplicaCounts")
		})
	}
}

// TestCalculateStatusWithReplicaCounts: the given counts are the ones
// written, also where they decide the failure reason.
func TestCalculateStatusWithReplicaCounts(t *testing.T) {
	rs := newReplicaSet(3, map[string]string{"name": "foo"})
	now := time.Now()
	counts := ReplicaCounts{Replicas: 5, FullyLabeledReplicas: 4, ReadyReplicas: 3, AvailableReplicas: 2}
	got := CalculateReplicaSetStatus(rs, nil, nil, errors.New("boom"), now, WithReplicaCounts(counts))
	assert.Equal(t, [4]int32{5, 4, 3, 2}, [4]int32{got.Replicas, got.FullyLabeledReplicas, got.ReadyReplicas, got.AvailableReplicas})
	if assert.Len(t, got.Conditions, 1) {
		assert.Equal(t, ReasonFailedDelete, got.Conditions[0].Reason, "five counted against three wanted")
	}
}

// TestCalculateStatusCarriesOver: observedGeneration, other conditions and a
// stale terminatingReplicas are handled as upstream (copied, copied, reset).
func TestCalculateStatusCarriesOver(t *testing.T) {
	rs := newReplicaSet(1, map[string]string{"name": "foo"})
	other := rsCond("Progressing", "Fine")
	rs.Status = appsv1.ReplicaSetStatus{Replicas: 9, ObservedGeneration: 4, TerminatingReplicas: ptr.To[int32](3),
		Conditions: []appsv1.ReplicaSetCondition{other}}
	before := rs.DeepCopy()

	got := CalculateReplicaSetStatus(rs, []*v1.Pod{newPod("p", rs, v1.PodRunning, nil)}, nil, nil, time.Now())
	assert.Equal(t, int64(4), got.ObservedGeneration)
	assert.Equal(t, []appsv1.ReplicaSetCondition{other}, got.Conditions)
	assert.Nil(t, got.TerminatingReplicas, "without the option the field is nil, even if it was set")
	assert.Equal(t, int32(1), got.Replicas)
	assert.Equal(t, before, rs, "rs is not modified")

	rc := rcOf(rs)
	rcBefore := rc.DeepCopy()
	gotRC := CalculateReplicationControllerStatus(rc, []*v1.Pod{newPod("p", rs, v1.PodRunning, nil)}, nil, time.Now())
	assert.Equal(t, int64(4), gotRC.ObservedGeneration)
	assert.Equal(t, []v1.ReplicationControllerCondition{rcCondOf(other)}, gotRC.Conditions)
	assert.Equal(t, rcBefore, rc, "rc is not modified")
}

// TestCalculateStatusConditions covers upstream's TestCalculateStatusConditions
// (§7.3) for both kinds, with the ReplicaFailure decision table of §5.1.
func TestCalculateStatusConditions(t *testing.T) {
	labelMap := map[string]string{"name": "foo"}
	rs := newReplicaSet(2, labelMap)
	replicaFailureRS := newReplicaSet(10, labelMap)
	replicaFailureRS.Status.Conditions = []appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: v1.ConditionTrue}}
	withOther := newReplicaSet(2, labelMap)
	withOther.Status.Conditions = []appsv1.ReplicaSetCondition{condImagePullBackOff()}
	pods := func(owner *appsv1.ReplicaSet, n int) []*v1.Pod {
		out := make([]*v1.Pod, n)
		for i := range out {
			out[i] = newPod(fmt.Sprintf("pod%d", i+1), owner, v1.PodRunning, nil)
		}
		return out
	}
	fakeErr := errors.New("fake manageReplicasErr")
	failure := func(reason, msg string) appsv1.ReplicaSetCondition {
		return appsv1.ReplicaSetCondition{Type: appsv1.ReplicaSetReplicaFailure, Status: v1.ConditionTrue, Reason: reason, Message: msg}
	}

	tests := []struct {
		name       string
		rs         *appsv1.ReplicaSet
		activePods []*v1.Pod
		err        error
		want       []appsv1.ReplicaSetCondition
	}{
		{name: "manageReplicasErr != nil && failureCond == nil, diff < 0", rs: rs, activePods: pods(rs, 1), err: fakeErr,
			want: []appsv1.ReplicaSetCondition{failure(ReasonFailedCreate, "fake manageReplicasErr")}},
		{name: "manageReplicasErr != nil && failureCond == nil, diff > 0", rs: rs, activePods: pods(rs, 3), err: fakeErr,
			want: []appsv1.ReplicaSetCondition{failure(ReasonFailedDelete, "fake manageReplicasErr")}},
		{name: "manageReplicasErr != nil && failureCond == nil, diff == 0", rs: rs, activePods: pods(rs, 2), err: fakeErr,
			want: []appsv1.ReplicaSetCondition{failure("", "fake manageReplicasErr")}},
		{name: "manageReplicasErr == nil && failureCond != nil", rs: replicaFailureRS, activePods: pods(replicaFailureRS, 1)},
		{name: "manageReplicasErr != nil && failureCond != nil", rs: replicaFailureRS, activePods: pods(replicaFailureRS, 1), err: fakeErr,
			want: []appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: v1.ConditionTrue}}},
		{name: "manageReplicasErr == nil && failureCond == nil", rs: rs, activePods: pods(rs, 1)},
		{name: "a new failure goes after other conditions", rs: withOther, activePods: pods(withOther, 0), err: fakeErr,
			want: []appsv1.ReplicaSetCondition{condImagePullBackOff(), failure(ReasonFailedCreate, "fake manageReplicasErr")}},
		{name: "removing the failure keeps other conditions", rs: withFailure(withOther), activePods: pods(withOther, 2),
			want: []appsv1.ReplicaSetCondition{condImagePullBackOff()}},
	}
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CalculateReplicaSetStatus(tc.rs, tc.activePods, nil, tc.err, now)
			// A condition created here carries now; existing ones keep theirs.
			want := append([]appsv1.ReplicaSetCondition(nil), tc.want...)
			for i := range want {
				if want[i].Message != "" {
					want[i].LastTransitionTime = metav1.NewTime(now)
				}
			}
			assert.Equal(t, want, got.Conditions)

			gotRC := CalculateReplicationControllerStatus(rcOf(tc.rs), tc.activePods, tc.err, now)
			assert.Equal(t, rcStatusOf(&appsv1.ReplicaSetStatus{Conditions: want}).Conditions, gotRC.Conditions, "ReplicationController")
		})
	}
}

func withFailure(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet {
	out := rs.DeepCopy()
	out.Status.Conditions = append(out.Status.Conditions, rsCond(appsv1.ReplicaSetReplicaFailure, ReasonFailedCreate))
	return out
}

// TestCalculateStatusBadInput: nil spec.replicas counts as 1, a nil RC template as one without labels.
func TestCalculateStatusBadInput(t *testing.T) {
	pod := newPod("p", newReplicaSet(1, map[string]string{"name": "foo"}), v1.PodRunning, nil)
	now := time.Now()
	errBoom := errors.New("boom")

	// With spec.replicas nil the desired count is 1: one pod and an error is
	// neither too few nor too many, two pods are too many, none too few.
	for _, tc := range []struct {
		pods   int
		reason string
	}{{0, ReasonFailedCreate}, {1, ""}, {2, ReasonFailedDelete}} {
		t.Run(fmt.Sprintf("nil spec.replicas with %d pods", tc.pods), func(t *testing.T) {
			rs := newReplicaSet(1, map[string]string{"name": "foo"})
			rs.Spec.Replicas = nil
			active := make([]*v1.Pod, tc.pods)
			for i := range active {
				active[i] = pod
			}
			got := CalculateReplicaSetStatus(rs, active, nil, errBoom, now)
			require.Len(t, got.Conditions, 1)
			assert.Equal(t, tc.reason, got.Conditions[0].Reason)

			rc := rcOf(rs)
			gotRC := CalculateReplicationControllerStatus(rc, active, errBoom, now)
			require.Len(t, gotRC.Conditions, 1)
			assert.Equal(t, tc.reason, gotRC.Conditions[0].Reason)
		})
	}

	t.Run("nil ReplicationController template", func(t *testing.T) {
		rc := rcOf(newReplicaSet(1, map[string]string{"name": "foo"}))
		rc.Spec.Template = nil
		got := CalculateReplicationControllerStatus(rc, []*v1.Pod{pod}, nil, now)
		assert.Equal(t, v1.ReplicationControllerStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}, got)
	})
}
