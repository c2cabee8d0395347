package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/podranking"
	"github.com/ctrlkit/ctrlkit/podset"
)

// Scenario 1: scaling 0 → 1000 with a burst of 500 creates exactly 1000 pods,
// never has more live pods than desired, and the status follows: replicas and
// fullyLabeledReplicas first, ready and available once the pods are ready.
func TestScaleUpTo1000(t *testing.T) {
	s := newScenario(t, 10*time.Minute)
	labels := map[string]string{"app": "scale-up"}
	s.createRS("web", 0, labels)
	s.runController(kindReplicaSet, podset.WithBurstReplicas(500))
	s.waitRS("web", time.Minute, "the empty ReplicaSet to be observed", func(rs *appsv1.ReplicaSet) bool { return rs.Status.Replicas == 0 })
	rec := s.recordPods("app=scale-up")

	start := time.Now()
	s.scaleRS("web", 1000)
	rs := s.waitRS("web", 5*time.Minute, "1000 replicas", func(rs *appsv1.ReplicaSet) bool {
		return rs.Status.Replicas == 1000 && rs.Status.FullyLabeledReplicas == 1000
	})
	assert.Zero(t, rs.Status.ReadyReplicas, "nothing is ready before the test marks it")
	assert.Zero(t, rs.Status.AvailableReplicas)
	t.Logf("0 → 1000 pods counted in status after %s", time.Since(start).Round(time.Millisecond))
	h := s.settle(rec, 2*time.Second)
	assert.Equal(t, 1000, h.Created, "pods created")
	assert.LessOrEqual(t, h.MaxActive, 1000, "live pods at any moment")
	assert.Zero(t, h.Deleted, "pods deleted")
	assert.Len(t, activePods(s.listPods("app=scale-up")), 1000)

	s.setPods(s.listPods("app=scale-up"), podState{bind: true, ready: ptr.To(true)})
	rs = s.waitRS("web", 3*time.Minute, "1000 ready and available replicas", func(rs *appsv1.ReplicaSet) bool {
		return rs.Status.ReadyReplicas == 1000 && rs.Status.AvailableReplicas == 1000
	})
	assert.Equal(t, int32(1000), rs.Status.Replicas)
	assert.Equal(t, int32(1000), rs.Status.FullyLabeledReplicas)
	t.Logf("0 → 1000 ready and available after %s", time.Since(start).Round(time.Millisecond))
}

// Scenario 2: scaling 1000 → 100 deletes exactly 900 pods, and the pods the
// ranking puts first (unassigned, not ready, low deletion cost) are among them.
func TestScaleDownTo100(t *testing.T) {
	s := newScenario(t, 10*time.Minute)
	labels := map[string]string{"app": "scale-down"}
	rs := s.createRS("web", 1000, labels)
	s.runController(kindReplicaSet, podset.WithBurstReplicas(500))
	s.waitRS("web", 5*time.Minute, "1000 replicas", func(rs *appsv1.ReplicaSet) bool { return rs.Status.Replicas == 1000 })

	pods := activePods(s.listPods("app=scale-down"))
	require.Len(t, pods, 1000)
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	// 100 stay unassigned (never bound), 100 are bound but not ready, 100 are
	// ready with a negative deletion cost, and 700 are bound and ready.
	unassigned, notReady, cheap, normal := pods[:100], pods[100:200], pods[200:300], pods[300:]
	s.setPods(notReady, podState{bind: true, ready: ptr.To(false)})
	s.setPods(cheap, podState{bind: true, ready: ptr.To(true)})
	s.setPods(normal, podState{bind: true, ready: ptr.To(true)})
	for _, p := range cheap {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"-100"}}}`, podranking.DeletionCostAnnotation)
		_, err := s.client.CoreV1().Pods(s.ns).Patch(s.ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		require.NoError(t, err)
	}
	// Wait until the controller has seen every status change before scaling.
	s.waitRS("web", 3*time.Minute, "800 ready replicas", func(rs *appsv1.ReplicaSet) bool { return rs.Status.ReadyReplicas == 800 })
	rec := s.recordPods("app=scale-down")

	start := time.Now()
	s.scaleRS("web", 100)
	s.waitRS("web", 5*time.Minute, "100 replicas", func(rs *appsv1.ReplicaSet) bool { return rs.Status.Replicas == 100 })
	t.Logf("1000 → 100 in %s", time.Since(start).Round(time.Millisecond))
	h := s.settle(rec, 2*time.Second)
	assert.Equal(t, 900, h.Deleted, "pods deleted")
	left := ownedBy(activePods(s.listPods("app=scale-down")), rs.UID)
	assert.Len(t, left, 100)
	live := map[string]bool{}
	for _, p := range left {
		live[p.Name] = true
	}
	normalNames := map[string]bool{}
	for _, p := range normal {
		normalNames[p.Name] = true
	}
	assert.Zero(t, h.Created, "pods created")
	for _, group := range []struct {
		name string
		pods []corev1.Pod
	}{{"unassigned", unassigned}, {"not ready", notReady}, {"low deletion cost", cheap}} {
		var kept []string
		for _, p := range group.pods {
			if !h.DeletedNames[p.Name] || live[p.Name] {
				kept = append(kept, p.Name)
			}
		}
		assert.Empty(t, kept, "%s pods should be deleted before ready, assigned ones", group.name)
	}
	for name := range live {
		assert.True(t, normalNames[name], "surviving pod %s should be a ready, assigned one", name)
	}
}

// Scenario 3: matching orphans are adopted through the apiserver's
// strategic-merge patch, a relabelled pod is released, and a pod controlled by
// someone else is left alone.
func TestAdoptAndRelease(t *testing.T) {
	s := newScenario(t, 5*time.Minute)
	labels := map[string]string{"app": "adopt"}
	pods := s.client.CoreV1().Pods(s.ns)

	var orphans []string
	for i := range 3 {
		p, err := pods.Create(s.ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("orphan-%d", i), Labels: labels},
			Spec:       podTemplate(labels).Spec,
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		orphans = append(orphans, p.Name)
	}
	foreignRef := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "someone-else",
		UID: types.UID("00000000-0000-0000-0000-00000000beef"), Controller: ptr.To(true)}
	foreign, err := pods.Create(s.ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "foreign", Labels: labels, OwnerReferences: []metav1.OwnerReference{foreignRef}},
		Spec:       podTemplate(labels).Spec,
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	rec := s.recordPods("app=adopt")
	rs := s.createRS("web", 3, labels)
	s.runController(kindReplicaSet)
	s.waitRS("web", time.Minute, "3 replicas", func(rs *appsv1.ReplicaSet) bool { return rs.Status.Replicas == 3 })
	h := s.settle(rec, 2*time.Second)
	assert.Zero(t, h.Created, "no pod created: the orphans fill the ReplicaSet")

	want := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: rs.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	for _, name := range orphans {
		p, err := pods.Get(s.ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, []metav1.OwnerReference{want}, p.OwnerReferences, "owner of adopted %s", name)
	}
	got, err := pods.Get(s.ctx, foreign.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, foreign.ResourceVersion, got.ResourceVersion, "the foreign pod must not be written")
	assert.Equal(t, []metav1.OwnerReference{foreignRef}, got.OwnerReferences)

	// Relabel one adopted pod: it no longer matches, so it is released, and a
	// replacement is created.
	_, err = pods.Patch(s.ctx, orphans[0], types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"moved"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	s.eventually(time.Minute, "the relabelled pod to be released", func() (bool, string) {
		p, err := pods.Get(s.ctx, orphans[0], metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(p.OwnerReferences) == 0, fmt.Sprintf("owners %v", p.OwnerReferences)
	})
	s.waitRS("web", time.Minute, "3 replicas again", func(rs *appsv1.ReplicaSet) bool { return rs.Status.Replicas == 3 })
	h = s.settle(rec, 2*time.Second)
	assert.Equal(t, 1, h.Created, "one replacement pod")
	assert.Len(t, ownedBy(activePods(s.listPods("app=adopt")), rs.UID), 3)
	got, err = pods.Get(s.ctx, foreign.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, foreign.ResourceVersion, got.ResourceVersion, "the foreign pod must still not be written")
}

// Scenario 4: a quota of 5 pods against a ReplicaSet of 20. Five pods run,
// ReplicaFailure/FailedCreate is set, slow start bounds the create calls of
// every sync, and raising the quota lets it converge and clears the condition.
func TestQuotaFailure(t *testing.T) {
	s := newScenario(t, 5*time.Minute)
	quotas := s.client.CoreV1().ResourceQuotas(s.ns)
	q, err := quotas.Create(s.ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("5")}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	// No quota controller runs: the test publishes the quota's status so the
	// admission plugin, which also maintains status.used, can enforce it.
	q.Status = corev1.ResourceQuotaStatus{
		Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("5")},
		Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")},
	}
	_, err = quotas.UpdateStatus(s.ctx, q, metav1.UpdateOptions{})
	require.NoError(t, err)

	labels := map[string]string{"app": "quota"}
	s.createRS("web", 20, labels)
	syncs := &syncCounter{}
	// One worker, so syncs of the ReplicaSet cannot overlap and each sync's
	// calls are bounded separately.
	s.runController(kindReplicaSet, podset.WithWorkers(1), podset.WithMetricsProvider(syncs))
	s.waitRS("web", time.Minute, "ReplicaFailure with 5 replicas", func(rs *appsv1.ReplicaSet) bool {
		c := condition(rs.Status.Conditions, appsv1.ReplicaSetReplicaFailure)
		return rs.Status.Replicas == 5 && c != nil && c.Status == corev1.ConditionTrue && c.Reason == "FailedCreate"
	})
	calls, nsyncs := s.creates.calls.Load(), syncs.syncs.Load()
	t.Logf("while over quota: %d create calls (%d refused) in %d syncs, at most %d at once",
		calls, s.creates.failed.Load(), nsyncs, s.creates.maxFly.Load())
	// Slow start: the first sync tries 1+2+4 (the batch of 4 hits the quota),
	// every later sync one call that fails; +1 for a sync still in progress.
	// Without slow start the first sync alone would make 20 calls.
	assert.LessOrEqual(t, calls, 7+nsyncs, "create calls bounded by slow start")
	assert.LessOrEqual(t, s.creates.maxFly.Load(), int64(4), "largest batch in flight")
	assert.Len(t, activePods(s.listPods("app=quota")), 5)

	// Raise it as a user (spec) and as the quota controller would (status);
	// the admission plugin may bump status.used concurrently, hence the retry.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		q, err := quotas.Get(s.ctx, "pods", metav1.GetOptions{})
		if err != nil {
			return err
		}
		q.Spec.Hard[corev1.ResourcePods] = resource.MustParse("20")
		q, err = quotas.Update(s.ctx, q, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		q.Status.Hard[corev1.ResourcePods] = resource.MustParse("20")
		_, err = quotas.UpdateStatus(s.ctx, q, metav1.UpdateOptions{})
		return err
	})
	require.NoError(t, err)

	rs := s.waitRS("web", 2*time.Minute, "20 replicas without ReplicaFailure", func(rs *appsv1.ReplicaSet) bool {
		return rs.Status.Replicas == 20 && condition(rs.Status.Conditions, appsv1.ReplicaSetReplicaFailure) == nil
	})
	assert.Len(t, ownedBy(activePods(s.listPods("app=quota")), rs.UID), 20)
}

// Scenario 5: the controller is stopped in the middle of a scale-up and a new
// one (new informers, new expectations) finishes it without over-creating.
func TestRestartMidScaleUp(t *testing.T) {
	s := newScenario(t, 5*time.Minute)
	labels := map[string]string{"app": "restart"}
	s.createRS("web", 0, labels)
	rec := s.recordPods("app=restart")
	// A small burst spreads the scale-up over many syncs, so there is a middle
	// to interrupt.
	// No drain: the stop is as abrupt as a crash, in-flight calls are cancelled.
	stop := s.runController(kindReplicaSet, podset.WithBurstReplicas(20), podset.WithDrainTimeout(0))
	s.waitRS("web", time.Minute, "the empty ReplicaSet to be observed", func(rs *appsv1.ReplicaSet) bool { return rs.Status.Replicas == 0 })
	s.scaleRS("web", 300)
	s.eventually(time.Minute, "the scale-up to start", func() (bool, string) {
		h := rec.snapshot()
		return h.Created >= 40, fmt.Sprintf("%d created", h.Created)
	})
	stop()
	// Creates the old controller sent just before it stopped may still land;
	// a restarted controller in production would also see them in its list.
	atRestart := s.settle(rec, time.Second).Created
	t.Logf("controller stopped after %d of 300 pods", atRestart)
	require.Less(t, atRestart, 300, "the restart must happen mid scale-up")

	s.runController(kindReplicaSet, podset.WithBurstReplicas(20))
	s.waitRS("web", 3*time.Minute, "300 replicas", func(rs *appsv1.ReplicaSet) bool { return rs.Status.Replicas == 300 })
	h := s.settle(rec, 2*time.Second)
	assert.Equal(t, 300, h.Created, "pods created across both controllers")
	assert.LessOrEqual(t, h.MaxActive, 300)
	assert.Zero(t, h.Deleted)
}

// Scenario 6: a ReplicaSet deleted mid scale-up and re-created under the same
// name while its pods still exist starts with fresh expectations: it converges
// at once, with pods of its own, instead of waiting out the old expectations.
func TestRecreateSameName(t *testing.T) {
	s := newScenario(t, 5*time.Minute)
	labels := map[string]string{"app": "recreate"}
	rec := s.recordPods("app=recreate")
	s.runController(kindReplicaSet, podset.WithBurstReplicas(10))
	old := s.createRS("web", 100, labels)
	s.eventually(time.Minute, "the first ReplicaSet's scale-up to start", func() (bool, string) {
		h := rec.snapshot()
		return h.Created >= 15, fmt.Sprintf("%d created", h.Created)
	})
	// No garbage collector runs, so the old pods stay, controlled by the old UID.
	require.NoError(t, s.client.AppsV1().ReplicaSets(s.ns).Delete(s.ctx, "web", metav1.DeleteOptions{}))
	s.eventually(30*time.Second, "the old ReplicaSet to be gone", func() (bool, string) {
		_, err := s.client.AppsV1().ReplicaSets(s.ns).Get(s.ctx, "web", metav1.GetOptions{})
		return err != nil, fmt.Sprint(err)
	})
	start := time.Now()
	fresh := s.createRS("web", 30, labels)
	require.NotEqual(t, old.UID, fresh.UID)
	// Far below the 5-minute expectations TTL: stale expectations would stall it.
	s.waitRS("web", time.Minute, "the new ReplicaSet's 30 replicas", func(rs *appsv1.ReplicaSet) bool { return rs.Status.Replicas == 30 })
	t.Logf("re-created ReplicaSet converged in %s", time.Since(start).Round(time.Millisecond))
	s.settle(rec, 2*time.Second)

	all := activePods(s.listPods("app=recreate"))
	assert.Len(t, ownedBy(all, fresh.UID), 30, "pods of the new ReplicaSet")
	oldPods := ownedBy(all, old.UID)
	assert.NotEmpty(t, oldPods, "the old ReplicaSet's pods stay with their dead owner")
	assert.Len(t, all, len(oldPods)+30, "no pod is orphaned or re-owned")
}

// Scenario 7: with minReadySeconds, availableReplicas rises once the pods have
// been ready long enough, with nothing but the controller's own requeue.
func TestMinReadySeconds(t *testing.T) {
	const minReady = 5
	s := newScenario(t, 3*time.Minute)
	labels := map[string]string{"app": "min-ready"}
	s.createRS("web", 3, labels, func(rs *appsv1.ReplicaSet) { rs.Spec.MinReadySeconds = minReady })
	s.runController(kindReplicaSet)
	s.waitRS("web", time.Minute, "3 replicas", func(rs *appsv1.ReplicaSet) bool { return rs.Status.Replicas == 3 })

	// Conditions carry whole seconds, so the ready time is truncated up front.
	readySince := time.Now().Truncate(time.Second)
	s.setPods(s.listPods("app=min-ready"), podState{bind: true, ready: ptr.To(true), readySince: readySince})
	rs := s.waitRS("web", 30*time.Second, "3 ready replicas", func(rs *appsv1.ReplicaSet) bool { return rs.Status.ReadyReplicas == 3 })
	if time.Since(readySince) < minReady*time.Second-500*time.Millisecond {
		assert.Zero(t, rs.Status.AvailableReplicas, "pods cannot be available before minReadySeconds")
	}
	s.waitRS("web", 30*time.Second, "3 available replicas", func(rs *appsv1.ReplicaSet) bool { return rs.Status.AvailableReplicas == 3 })
	elapsed := time.Since(readySince)
	t.Logf("available %s after the pods became ready (minReadySeconds %d)", elapsed.Round(time.Millisecond), minReady)
	assert.GreaterOrEqual(t, elapsed, minReady*time.Second, "available too early")
	assert.Less(t, elapsed, (minReady+10)*time.Second, "available too late for a requeue at minReadySeconds")
}

// Scenario 8: 100 ReplicaSets of 20 pods each in one namespace all converge.
func TestManyReplicaSets(t *testing.T) {
	const sets, size = 100, 20
	s := newScenario(t, 10*time.Minute)
	s.runController(kindReplicaSet, podset.WithWorkers(5))
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, sets)
	for i := range sets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("rs-%03d", i)
			labels := map[string]string{"app": "many", "set": name}
			_, err := s.client.AppsV1().ReplicaSets(s.ns).Create(s.ctx, &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](size), Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: podTemplate(labels)},
			}, metav1.CreateOptions{})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	s.eventually(8*time.Minute, "every ReplicaSet to converge", func() (bool, string) {
		list, err := s.client.AppsV1().ReplicaSets(s.ns).List(s.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		done := 0
		for _, rs := range list.Items {
			if rs.Status.ObservedGeneration >= rs.Generation && rs.Status.Replicas == size && rs.Status.FullyLabeledReplicas == size {
				done++
			}
		}
		return done == sets, fmt.Sprintf("%d of %d converged", done, sets)
	})
	t.Logf("%d ReplicaSets × %d pods converged in %s", sets, size, time.Since(start).Round(time.Millisecond))
	assert.Len(t, activePods(s.listPods("app=many")), sets*size)
}
