package workerset_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/workerset"
	"github.com/ctrlkit/ctrlkit/history"
	"github.com/ctrlkit/ctrlkit/status"
)

// rollFixture is a WorkerSet over the fake client, with Workers marked
// ready by the test as an agent would.
type rollFixture struct {
	c    client.Client
	core *childset.Reconciler[*workerset.WorkerSet, *workerset.Worker]
}

func newRollFixture(t *testing.T, set *workerset.WorkerSet) rollFixture {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, workerset.AddToScheme(scheme))
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(set).WithStatusSubresource(&workerset.WorkerSet{}, &workerset.Worker{}).
		WithIndex(&workerset.Worker{}, childsetcr.ControllerField, childsetcr.IndexByController).Build()
	core, err := childsetcr.NewCore(c, nil, nil, workerset.SetAdapter{}, workerset.WorkerAdapter{})
	require.NoError(t, err)
	return rollFixture{c: c, core: core}
}

// sync reconciles the set, observes what it created and deleted as the
// Worker handler would, and marks every Worker ready.
func (f rollFixture) sync(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	before := workers(t, f.c)
	_, err := childsetcr.NewReconciler(f.core).Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "pool"}})
	require.NoError(t, err)
	after := workers(t, f.c)
	for name, w := range after {
		if _, ok := before[name]; !ok {
			f.core.ObserveAdd(&w)
		}
		if !w.Status.Ready {
			w.Status.Ready, w.Status.ReadySince = true, &metav1.Time{Time: time.Now().Add(-time.Hour)}
			require.NoError(t, f.c.Status().Update(ctx, &w))
		}
	}
	for name, w := range before {
		if _, ok := after[name]; !ok {
			f.core.ObserveDelete(&w, false)
		}
	}
}

func (f rollFixture) set(t *testing.T) *workerset.WorkerSet {
	t.Helper()
	s := &workerset.WorkerSet{}
	require.NoError(t, f.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pool"}, s))
	return s
}

func (f rollFixture) revisions(t *testing.T) []appsv1.ControllerRevision {
	t.Helper()
	var list appsv1.ControllerRevisionList
	require.NoError(t, f.c.List(context.Background(), &list, client.InNamespace("ns")))
	return list.Items
}

// rollTo changes the template's image and syncs until every Worker is at
// the update revision, checking the bounds after each sync: never more than
// replicas+maxSurge Workers, never fewer than replicas-maxUnavailable ready
// ones (they are marked ready right after their creation). It returns how
// many syncs the rollout took.
func (f rollFixture) rollTo(t *testing.T, image string, replicas, surge int) int {
	t.Helper()
	set := f.set(t)
	set.Spec.Template.Spec.Image = image
	require.NoError(t, f.c.Update(context.Background(), set))
	for n := 1; n <= 20; n++ {
		f.sync(t)
		got := workers(t, f.c)
		ready := 0
		for _, w := range got {
			if w.Status.Ready {
				ready++
			}
		}
		assert.LessOrEqual(t, len(got), replicas+surge, "sync %d: total", n)
		assert.GreaterOrEqual(t, ready, replicas, "sync %d: ready", n)
		st := f.set(t).Status
		if st.UpdateRevision != "" && st.CurrentRevision == st.UpdateRevision && st.UpdatedReplicas == int32(replicas) && len(got) == replicas {
			for _, w := range got {
				assert.Equal(t, image, w.Spec.Image, w.Name)
			}
			return n
		}
	}
	t.Fatalf("the rollout to %s did not finish in 20 syncs: %+v", image, f.set(t).Status)
	return 0
}

// A template change rolls the Workers to the new revision over a few
// reconciles within maxSurge 1 and maxUnavailable 0; the status follows;
// a rollback reuses the first revision rather than writing a third.
func TestWorkerSetRollingUpdate(t *testing.T) {
	set := newSet(4)
	surge, unavailable := intstr.FromInt32(1), intstr.FromInt32(0)
	set.Spec.Strategy.RollingUpdate = &workerset.RollingUpdate{MaxSurge: &surge, MaxUnavailable: &unavailable}
	set.Spec.MinReadySeconds = 5
	f := newRollFixture(t, set)
	f.sync(t)
	f.sync(t)
	st := f.set(t).Status
	require.Equal(t, int32(4), st.AvailableReplicas, "ready an hour ago counts as available: %+v", st)
	first := st.UpdateRevision
	require.NotEmpty(t, first)
	require.Len(t, f.revisions(t), 1)
	for _, w := range workers(t, f.c) {
		assert.Equal(t, first, "pool-"+w.Labels[history.ControllerRevisionHashLabel])
	}

	syncs := f.rollTo(t, "worker:2", 4, 1)
	assert.Greater(t, syncs, 2, "one Worker at a time takes several syncs")
	st = f.set(t).Status
	assert.NotEqual(t, first, st.UpdateRevision)
	assert.Equal(t, int32(4), st.UpdatedReplicas)
	assert.Equal(t, int32(0), *st.CollisionCount)
	assert.Len(t, f.revisions(t), 2)

	f.rollTo(t, "worker:1", 4, 1)
	assert.Equal(t, first, f.set(t).Status.UpdateRevision, "the rollback reuses the first revision")
	revs := f.revisions(t)
	assert.Len(t, revs, 2)
	for _, r := range revs {
		if r.Name == first {
			assert.Equal(t, int64(3), r.Revision, "renumbered as the newest")
		}
	}
}

// A paused WorkerSet scales at the current revision and replaces no
// Worker, and with a progress deadline its Progressing condition says so;
// resumed, it rolls out and reports the rollout complete.
func TestWorkerSetPausedWithProgressDeadline(t *testing.T) {
	set := newSet(2)
	surge, unavailable := intstr.FromInt32(1), intstr.FromInt32(0)
	set.Spec.Strategy.RollingUpdate = &workerset.RollingUpdate{MaxSurge: &surge, MaxUnavailable: &unavailable}
	set.Spec.ProgressDeadlineSeconds = ptrTo(int32(600))
	f := newRollFixture(t, set)
	f.sync(t)
	f.sync(t)
	progressing := func() appsv1.DeploymentCondition {
		t.Helper()
		conds := f.set(t).Status.Conditions
		require.Len(t, conds, 1)
		return conds[0]
	}
	assert.Equal(t, status.ReasonNewRevisionAvailable, progressing().Reason)

	set = f.set(t)
	set.Spec.Paused = true
	set.Spec.Replicas = ptrTo(int32(3))
	set.Spec.Template.Spec.Image = "worker:2"
	require.NoError(t, f.c.Update(context.Background(), set))
	for range 3 {
		f.sync(t)
	}
	got := workers(t, f.c)
	assert.Len(t, got, 3)
	for _, w := range got {
		assert.Equal(t, "worker:1", w.Spec.Image, w.Name)
	}
	assert.Equal(t, status.ReasonPaused, progressing().Reason)

	set = f.set(t)
	set.Spec.Paused = false
	require.NoError(t, f.c.Update(context.Background(), set))
	f.rollTo(t, "worker:2", 3, 1)
	f.sync(t)
	assert.Equal(t, status.ReasonNewRevisionAvailable, progressing().Reason)
}

// Without a strategy nothing rolls: a changed template leaves the Workers
// as they are and no revision is written.
func TestWorkerSetWithoutStrategyDoesNotRoll(t *testing.T) {
	f := newRollFixture(t, newSet(2))
	f.sync(t)
	set := f.set(t)
	set.Spec.Template.Spec.Image = "worker:2"
	require.NoError(t, f.c.Update(context.Background(), set))
	f.sync(t)
	f.sync(t)
	for _, w := range workers(t, f.c) {
		assert.Equal(t, "worker:1", w.Spec.Image)
	}
	assert.Empty(t, f.revisions(t))
	assert.Equal(t, int32(2), f.set(t).Status.ReadyReplicas)
}

// DeepCopy copies the rollout fields too.
func TestDeepCopyRolloutFields(t *testing.T) {
	set := newSet(1)
	surge, unavailable := intstr.FromInt32(1), intstr.FromString("10%")
	set.Spec.Strategy.RollingUpdate = &workerset.RollingUpdate{MaxSurge: &surge, MaxUnavailable: &unavailable, Partition: 2}
	set.Spec.RevisionHistoryLimit = ptrTo(int32(3))
	set.Status.CollisionCount = ptrTo(int32(1))
	set.Spec.ProgressDeadlineSeconds = ptrTo(int32(60))
	set.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Reason: "r"}}
	cp := set.DeepCopy()
	*cp.Spec.ProgressDeadlineSeconds = 9
	cp.Status.Conditions[0].Reason = "changed"
	*cp.Spec.Strategy.RollingUpdate.MaxSurge = intstr.FromInt32(9)
	*cp.Spec.Strategy.RollingUpdate.MaxUnavailable = intstr.FromInt32(9)
	cp.Spec.Strategy.RollingUpdate.Partition = 9
	*cp.Spec.RevisionHistoryLimit = 9
	*cp.Status.CollisionCount = 9
	assert.Equal(t, surge, *set.Spec.Strategy.RollingUpdate.MaxSurge)
	assert.Equal(t, unavailable, *set.Spec.Strategy.RollingUpdate.MaxUnavailable)
	assert.Equal(t, int32(2), set.Spec.Strategy.RollingUpdate.Partition)
	assert.Equal(t, int32(3), *set.Spec.RevisionHistoryLimit)
	assert.Equal(t, int32(1), *set.Status.CollisionCount)
	assert.Equal(t, int32(60), *set.Spec.ProgressDeadlineSeconds)
	assert.Equal(t, "r", set.Status.Conditions[0].Reason)

	w := worker("w", true, set)
	since := metav1.NewTime(time.Unix(100, 0))
	w.Status.ReadySince = &since
	wc := w.DeepCopy()
	wc.Status.ReadySince.Time = time.Unix(200, 0)
	assert.Equal(t, time.Unix(100, 0), w.Status.ReadySince.Time)
}

func ptrTo[T any](v T) *T { return &v }

// The collision count the status holds is kept while the WorkerSet does not
// roll out, and is where a rollout starts counting from: childset applies
// the rule, not the adapter.
func TestWorkerSetKeepsTheCollisionCount(t *testing.T) {
	set := newSet(2)
	set.Status.CollisionCount = ptr.To[int32](3)
	f := newRollFixture(t, set)
	f.sync(t) // creates two Workers, having seen none
	f.sync(t)
	st := f.set(t).Status
	assert.Equal(t, int32(2), st.Replicas)
	require.NotNil(t, st.CollisionCount, "kept without a rollout")
	assert.Equal(t, int32(3), *st.CollisionCount)
	assert.Empty(t, st.UpdateRevision)

	set = f.set(t)
	set.Spec.Strategy.RollingUpdate = &workerset.RollingUpdate{}
	require.NoError(t, f.c.Update(context.Background(), set))
	f.sync(t)
	st = f.set(t).Status
	assert.NotEmpty(t, st.UpdateRevision)
	require.NotNil(t, st.CollisionCount)
	assert.Equal(t, int32(3), *st.CollisionCount, "the rollout counts on from the stored count")
}
