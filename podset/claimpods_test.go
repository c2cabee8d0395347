package podset

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestClaimSortsPodsAsUpstream checks the claim of a sync against the
// steps upstream takes: podutil's active filter, a claim of the active pods
// only, the terminating pods the owner controls and selects, and the
// status counted over the result (rsKind.UpdateStatus recounts every
// sync's counts). The status shows what the sync kept; nothing is written
// but the status.
func TestClaimSortsPodsAsUpstream(t *testing.T) {
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
		name                    string
		pods                    []*v1.Pod
		wantActive, wantDeleted int32
	}{
		{name: "no pods"},
		{name: "only finished pods", pods: []*v1.Pod{succeeded, failedDeleting}},
		{name: "mixed", pods: []*v1.Pod{terminating, running, succeeded, pending, failedDeleting},
			wantActive: 2, wantDeleted: 1},
		{name: "active only", pods: []*v1.Pod{pending, running}, wantActive: 2},
		{name: "others' pods and unselected terminating pods are left out",
			pods:       []*v1.Pod{othersRunning, running, othersTerminating, unlabelled, terminating, pending},
			wantActive: 2, wantDeleted: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			owner := rs.DeepCopy()
			owner.Spec.Replicas = &tc.wantActive
			e := newEnv(t, []runtime.Object{owner})
			e.addOwner(owner)
			e.addPods(tc.pods...)
			require.NoError(t, e.sync(owner))
			e.requireCounts(0, 0, 0)
			got := e.storedStatus(owner)
			assert.Equal(t, tc.wantActive, got.Replicas, "active pods")
			assert.Equal(t, &tc.wantDeleted, got.TerminatingReplicas, "terminating pods")
		})
	}

	t.Run("claims only active pods, and keeps claiming after an error", func(t *testing.T) {
		e := newEnv(t, []runtime.Object{rs})
		e.addOwner(rs)
		e.pc.PatchErr = errors.New("patch refused")
		orphan := newPod("orphan", rs, v1.PodRunning, fooBar, false)
		orphanTerminating := newPod("orphan-terminating", rs, v1.PodRunning, fooBar, false)
		orphanTerminating.DeletionTimestamp = &now
		stray := newPod("stray", rs, v1.PodRunning, map[string]string{"foo": "baz"}, true)
		e.addPods(orphan, orphanTerminating, running, stray)
		err := e.sync(rs)
		require.Error(t, err)
		assert.ErrorContains(t, err, "patch refused")
		var agg interface{ Errors() []error }
		require.True(t, errors.As(err, &agg))
		assert.Len(t, agg.Errors(), 2, "one error per failed pod, as upstream aggregates them")
		// The adoption failed, the release after it was still sent, the
		// terminating orphan was left alone, and nothing was created.
		assert.ElementsMatch(t, []string{"default/orphan", "default/stray"}, e.pc.PatchedPods)
		e.requireCounts(0, 0, 2)
	})
}

// storedStatus is the status the fake API server holds for rs.
func (e *env) storedStatus(rs *appsv1.ReplicaSet) appsv1.ReplicaSetStatus {
	e.t.Helper()
	got, err := e.client.AppsV1().ReplicaSets(rs.Namespace).Get(e.ctx, rs.Name, metav1.GetOptions{})
	require.NoError(e.t, err)
	return got.Status
}

// TestClaimMemoMatchesAFreshClaim syncs one controller sync after sync,
// its claim memo then answering for the pods it has seen, while between
// syncs pods are replaced by changed copies (as the informer replaces
// them), added and removed, and the selector or template labels change.
// Every sync must hand the status what a new controller, without a memo,
// hands it for the same pods.
func TestClaimMemoMatchesAFreshClaim(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	rs := newRS("foobar", 3, fooBar)
	other := newRS("other", 3, fooBar)
	now := metav1.Now()
	labelSets := []map[string]string{fooBar, {"foo": "baz"}, {"foo": "bar", "extra": "x"}}
	mk := func(i int) *v1.Pod {
		owner := rs
		if r.IntN(5) == 0 {
			owner = other
		}
		phases := []v1.PodPhase{v1.PodRunning, v1.PodPending, v1.PodSucceeded, v1.PodFailed}
		// Owned pods only, or ones another owner controls: an orphan the
		// selector matches would be adopted, which is checked elsewhere.
		p := newPod("pod-"+strconv.Itoa(i), owner, phases[r.IntN(len(phases))], labelSets[r.IntN(len(labelSets))], true)
		if r.IntN(6) == 0 {
			p.DeletionTimestamp = &now
		}
		if r.IntN(3) == 0 {
			p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: now}}
		}
		return p
	}
	pods := make([]*v1.Pod, 50)
	for i := range pods {
		pods[i] = mk(i)
	}
	spied := func(seen *[]StatusInput) func(Kind[*appsv1.ReplicaSet]) Kind[*appsv1.ReplicaSet] {
		return func(k Kind[*appsv1.ReplicaSet]) Kind[*appsv1.ReplicaSet] { return statusSpy{Kind: k, seen: seen} }
	}
	var memoSeen []StatusInput
	// No events: a FakeRecorder blocks once its buffer is full.
	memoised := newEnvWrapped(t, spied(&memoSeen), nil, WithEventRecorder(nil))
	for sync := range 200 {
		switch r.IntN(10) {
		case 0:
			rs = rs.DeepCopy()
			rs.Spec.Selector = metav1.SetAsLabelSelector(map[string]string{"foo": "bar", "extra": "x"})
		case 1:
			rs = rs.DeepCopy()
			rs.Spec.Selector = metav1.SetAsLabelSelector(fooBar)
		case 2:
			rs = rs.DeepCopy()
			rs.Spec.Template.Labels = labelSets[r.IntN(len(labelSets))]
		}
		for range r.IntN(5) {
			i := r.IntN(len(pods))
			if r.IntN(4) == 0 {
				pods = append(pods[:i], pods[i+1:]...)
			} else {
				pods[i] = mk(i) // a new object for a changed pod
			}
		}
		if r.IntN(3) == 0 {
			pods = append(pods, mk(1000+sync))
		}
		var freshSeen []StatusInput
		fresh := newEnvWrapped(t, spied(&freshSeen), nil, WithEventRecorder(nil))
		for _, e := range []*env{fresh, memoised} {
			listed := make([]any, len(pods))
			for i, p := range pods {
				listed[i] = p
			}
			require.NoError(t, e.podStore().Replace(listed, ""))
			require.NoError(t, e.inf.Apps().V1().ReplicaSets().Informer().GetIndexer().Replace([]any{rs}, ""))
			_ = e.sync(rs) // a release may fail: FakePodControl leaves the store as it is
		}
		require.Len(t, freshSeen, 1, "sync %d", sync)
		want, got := freshSeen[0], memoSeen[len(memoSeen)-1]
		// The order is the listing's, which two stores may give apart.
		require.ElementsMatch(t, podNames(want.Active), podNames(got.Active), "sync %d", sync)
		require.ElementsMatch(t, podNames(want.Terminating), podNames(got.Terminating), "sync %d", sync)
		require.Equal(t, want.Counts(), got.Counts(), "sync %d", sync)
		require.Equal(t, want.SpecErr == nil, got.SpecErr == nil, "sync %d", sync)
	}
}
