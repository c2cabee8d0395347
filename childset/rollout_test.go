package childset_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/history"
	"github.com/ctrlkit/ctrlkit/status"
)

// rolloutSpec rolls its owners out: the child template records the owner
// template's "version" annotation, and the status written is kept, its
// collision count persisted as an owner's status would.
type rolloutSpec struct {
	rsSpec
	update     childset.RollingUpdate
	off        bool
	limit      int32
	collisions *int32
	paused     bool
	deadline   *int32
	written    []childset.Status
}

func rolloutTemplate(rs *appsv1.ReplicaSet) *v1.ConfigMap {
	return &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Labels: rs.Spec.Template.Labels},
		Data:       map[string]string{"version": rs.Spec.Template.Annotations["version"]},
	}
}

func (*rolloutSpec) NewChild(rs *appsv1.ReplicaSet) (*v1.ConfigMap, error) {
	return rolloutTemplate(rs), nil
}

func (s *rolloutSpec) RollingUpdate(*appsv1.ReplicaSet) (childset.RollingUpdate, bool) {
	return s.update, !s.off
}

func (s *rolloutSpec) RevisionHistoryLimit(*appsv1.ReplicaSet) int32 { return s.limit }

func (s *rolloutSpec) CollisionCount(*appsv1.ReplicaSet) *int32 { return s.collisions }

func (*rolloutSpec) MinReadySeconds(rs *appsv1.ReplicaSet) int32 { return rs.Spec.MinReadySeconds }

func (s *rolloutSpec) Paused(*appsv1.ReplicaSet) bool { return s.paused }

func (s *rolloutSpec) ProgressDeadlineSeconds(*appsv1.ReplicaSet) *int32 { return s.deadline }

func (s *rolloutSpec) StoredProgress(*appsv1.ReplicaSet) (status.ProgressCounts, []appsv1.DeploymentCondition) {
	st := s.last()
	return status.ProgressCounts{Replicas: st.Replicas, UpdatedReplicas: st.UpdatedReplicas,
		ReadyReplicas: st.ReadyReplicas, AvailableReplicas: st.AvailableReplicas}, st.Conditions
}

func (s *rolloutSpec) UpdateStatus(_ context.Context, _ *appsv1.ReplicaSet, st childset.Status) error {
	s.written = append(s.written, st)
	count := st.CollisionCount
	s.collisions = &count
	return nil
}

func (s *rolloutSpec) last() childset.Status {
	if len(s.written) == 0 {
		return childset.Status{}
	}
	return s.written[len(s.written)-1]
}

// rollEnv is env with rolling updates: revisions in a fake history over an
// informer store the test reads.
type rollEnv struct {
	*env
	history   *refusingHistory
	spec      *rolloutSpec
	revisions cache.Indexer
	owner     *appsv1.ReplicaSet
}

func newRollEnv(t *testing.T, replicas int32, update childset.RollingUpdate, opts ...childset.Option) *rollEnv {
	t.Helper()
	e := newEnv(t)
	informer := informers.NewSharedInformerFactory(fake.NewClientset(), 0).Apps().V1().ControllerRevisions()
	re := &rollEnv{env: e, spec: &rolloutSpec{rsSpec: rsSpec{e.owners}, update: update, limit: 10},
		revisions: informer.Informer().GetIndexer(), history: &refusingHistory{Interface: history.NewFakeHistory(informer)}}
	e.r = childset.NewReconciler[*appsv1.ReplicaSet](re.spec,
		readySinceKind{cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}}, configMapControl(e.client, nil),
		append([]childset.Option{childset.WithEventRecorder(e.recorder), childset.WithClock(e.clock),
			childset.WithRevisions(re.history)}, opts...)...)
	re.owner = newOwner("web", replicas)
	re.owner.Generation = 1
	re.owner.Spec.Template.Annotations = map[string]string{"version": "v1"}
	e.addOwner(re.owner)
	return re
}

// deleteGracefully makes the API's deletions of children graceful: a
// deleted child gets a deletion timestamp and stays until
// finishDeletions, as one with a finalizer or a grace period would.
func (e *rollEnv) deleteGracefully() {
	e.client.PrependReactor("delete", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name := a.(k8stesting.DeleteAction).GetName()
		obj, err := e.cluster.Tracker().Get(v1.SchemeGroupVersion.WithResource("configmaps"), ns, name)
		if err != nil {
			return true, nil, err
		}
		cm := obj.(*v1.ConfigMap).DeepCopy()
		if cm.DeletionTimestamp == nil {
			now := metav1.NewTime(e.clock.Now())
			cm.DeletionTimestamp = &now
		}
		return true, nil, e.cluster.Tracker().Update(v1.SchemeGroupVersion.WithResource("configmaps"), cm, ns)
	})
}

// terminating names the API's children being deleted.
func (e *rollEnv) terminating() []string {
	var out []string
	for _, cm := range e.apiChildren() {
		if cm.DeletionTimestamp != nil {
			out = append(out, cm.Name)
		}
	}
	return out
}

// finishDeletions removes the named children for good.
func (e *rollEnv) finishDeletions(names []string) {
	e.t.Helper()
	for _, name := range names {
		require.NoError(e.t, e.cluster.Tracker().Delete(v1.SchemeGroupVersion.WithResource("configmaps"), ns, name))
	}
}

// refusingHistory fails the deletion of the revision called refuse.
type refusingHistory struct {
	history.Interface
	refuse string
}

func (h *refusingHistory) DeleteControllerRevision(ctx context.Context, rev *appsv1.ControllerRevision) error {
	if rev.Name == h.refuse {
		return apierrors.NewForbidden(appsv1.Resource("controllerrevisions"), rev.Name, errors.New("not allowed"))
	}
	return h.Interface.DeleteControllerRevision(ctx, rev)
}

// setVersion changes the owner's template, as an edit of its spec would.
func (e *rollEnv) setVersion(version string) {
	e.t.Helper()
	e.owner = e.owner.DeepCopy()
	e.owner.Generation++
	e.owner.Spec.Template.Annotations["version"] = version
	require.NoError(e.t, e.owners.Update(e.owner))
}

func (e *rollEnv) setPartition(p int32) {
	e.t.Helper()
	e.spec.update.Partition = p
	e.owner = e.owner.DeepCopy()
	e.owner.Generation++
	require.NoError(e.t, e.owners.Update(e.owner))
}

// becomeReady marks the children of the API called names that are not
// ready yet ready from now on, as a kubelet would.
func (e *rollEnv) becomeReady(names []string) {
	e.t.Helper()
	for _, cm := range e.apiChildren() {
		if cm.Annotations["ready"] == "true" || !slices.Contains(names, cm.Name) {
			continue
		}
		cm = cm.DeepCopy()
		cm.Annotations = map[string]string{"ready": "true", "ready-since": e.clock.Now().Format(time.RFC3339)}
		_, err := e.client.CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{})
		require.NoError(e.t, err)
	}
}

// available counts the API's children that are available now.
func (e *rollEnv) available() int {
	n := 0
	for _, cm := range e.apiChildren() {
		since, err := time.Parse(time.RFC3339, cm.Annotations["ready-since"])
		minReady := time.Duration(e.owner.Spec.MinReadySeconds) * time.Second
		if cm.DeletionTimestamp == nil && cm.Annotations["ready"] == "true" && err == nil && !since.Add(minReady).After(e.clock.Now()) {
			n++
		}
	}
	return n
}

// settle reconciles, catches up and makes every child ready until the
// status shows no change left.
func (e *rollEnv) settle() {
	e.t.Helper()
	e.steps(func(int) {})
}

// steps drives the owner to the end of its rollout: sync, the cache
// catches up, the children that existed before the sync become ready (so
// a child is never ready at the first sync that sees it), five seconds
// pass (a child becomes available minReadySeconds after it became ready),
// the cache catches up; each sync is repeated before the cache catches
// up. check runs after every write and every change of readiness, with the
// step number.
func (e *rollEnv) steps(check func(step int)) int {
	e.t.Helper()
	for step := range 200 {
		before, leaving := e.apiNames(), e.terminating()
		e.reconcile("web")
		check(step)
		// A cache that has not seen the writes yet: expectations keep the
		// core from acting on it.
		e.reconcile("web")
		check(step)
		e.catchUp()
		e.becomeReady(before)
		check(step)
		e.finishDeletions(leaving) // each lived through one sync
		e.clock.Step(5 * time.Second)
		e.catchUp()
		if e.done() {
			e.reconcile("web") // the status of the finished rollout
			return step + 1
		}
	}
	e.t.Fatalf("the rollout did not finish in 200 steps: %+v", e.spec.last())
	return 0
}

// done reports that the last sync's status showed the wanted children all
// updated and available, and the API holds no other.
func (e *rollEnv) done() bool {
	st := e.spec.last()
	want := *e.owner.Spec.Replicas
	updated := st.UpdatedReplicas == want || st.UpdateRevision == "" // not rolling out
	if st.CurrentRevision != st.UpdateRevision {
		updated = st.UpdatedReplicas == want-e.spec.update.Partition && st.CurrentReplicas == e.spec.update.Partition
	}
	return st.ObservedGeneration == e.owner.Generation && st.Replicas == want && updated &&
		st.AvailableReplicas == want && len(e.apiChildren()) == int(want) && len(e.terminating()) == 0
}

// hashes counts the API's children by their revision hash label.
func (e *rollEnv) hashes() map[string]int {
	out := map[string]int{}
	for _, cm := range e.apiChildren() {
		out[cm.Labels[history.ControllerRevisionHashLabel]]++
	}
	return out
}

func (e *rollEnv) revisionList() []*appsv1.ControllerRevision {
	var out []*appsv1.ControllerRevision
	for _, obj := range e.revisions.List() {
		out = append(out, obj.(*appsv1.ControllerRevision))
	}
	history.SortControllerRevisions(out)
	return out
}

func revisionHashOf(name string) string { return name[strings.LastIndexByte(name, '-')+1:] }

func pct(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
func num(n int) *intstr.IntOrString    { v := intstr.FromInt32(int32(n)); return &v }

// rollTo changes the version and drives the rollout to its end, checking
// the bounds at every step; it returns the steps taken and the most
// children seen at once.
func (e *rollEnv) rollTo(version string, surge, unavailable int) (steps, most int) {
	e.t.Helper()
	e.setVersion(version)
	replicas := int(*e.owner.Spec.Replicas)
	steps = e.steps(func(step int) {
		total := len(e.apiChildren())
		most = max(most, total)
		if total > replicas+surge {
			e.t.Fatalf("step %d: %d children, more than %d + maxSurge %d", step, total, replicas, surge)
		}
		if avail := e.available(); avail < replicas-unavailable {
			e.t.Fatalf("step %d: %d children available, fewer than %d - maxUnavailable %d", step, avail, replicas, unavailable)
		}
	})
	return steps, most
}

func TestRolloutInterchangeableSurge(t *testing.T) {
	e := newRollEnv(t, 10, childset.RollingUpdate{MaxSurge: pct("25%"), MaxUnavailable: num(0)})
	e.settle()
	first := e.spec.last()
	require.Equal(t, map[string]int{revisionHashOf(first.UpdateRevision): 10}, e.hashes(), "every child is labelled with its revision's hash")

	steps, most := e.rollTo("v2", 3, 0)
	t.Logf("10 children, maxSurge 25%%, maxUnavailable 0: %d steps, at most %d children at once", steps, most)
	assert.Equal(t, 13, most, "the surge is used")

	st := e.spec.last()
	revs := e.revisionList()
	require.Len(t, revs, 2)
	assert.Equal(t, revs[1].Name, st.UpdateRevision)
	assert.NotEqual(t, first.UpdateRevision, st.UpdateRevision)
	assert.Equal(t, map[string]int{revisionHashOf(st.UpdateRevision): 10}, e.hashes())
	assert.Equal(t, childset.Status{Replicas: 10, ReadyReplicas: 10, AvailableReplicas: 10, UpdatedReplicas: 10, CurrentReplicas: 10,
		CurrentRevision: st.UpdateRevision, UpdateRevision: st.UpdateRevision, ObservedGeneration: 2}, st)
	for _, cm := range e.apiChildren() {
		assert.Equal(t, "v2", cm.Data["version"], cm.Name)
	}
}

// Mid-rollout, the status names both revisions and counts their children.
func TestRolloutStatusMidway(t *testing.T) {
	e := newRollEnv(t, 4, childset.RollingUpdate{MaxSurge: num(1), MaxUnavailable: num(0)})
	e.settle()
	old := e.spec.last().UpdateRevision
	e.setVersion("v2")
	e.reconcile("web") // creates one child at v2
	e.catchUp()
	e.reconcile("web")
	st := e.spec.last()
	assert.Equal(t, old, st.CurrentRevision)
	assert.NotEqual(t, old, st.UpdateRevision)
	assert.EqualValues(t, 5, st.Replicas)
	assert.EqualValues(t, 4, st.CurrentReplicas)
	assert.EqualValues(t, 1, st.UpdatedReplicas)
	assert.EqualValues(t, 4, st.AvailableReplicas, "the new child is not ready yet")
}

func TestRolloutInterchangeableUnavailableWithMinReady(t *testing.T) {
	e := newRollEnv(t, 10, childset.RollingUpdate{MaxSurge: num(0), MaxUnavailable: pct("10%")})
	e.owner.Spec.MinReadySeconds = 10
	require.NoError(t, e.owners.Update(e.owner))
	e.settle()
	steps, most := e.rollTo("v2", 0, 1)
	t.Logf("10 children, maxSurge 0, maxUnavailable 10%%, minReadySeconds 10: %d steps", steps)
	assert.Equal(t, 10, most, "no surge")
	st := e.spec.last()
	assert.EqualValues(t, 10, st.UpdatedReplicas)
	assert.Equal(t, st.UpdateRevision, st.CurrentRevision)
	assert.GreaterOrEqual(t, steps, 10, "one child at a time")
}

// A partition keeps that many children at the current revision, however
// many passes run; lowering it finishes the rollout.
func TestRolloutPartitionHeld(t *testing.T) {
	e := newRollEnv(t, 10, childset.RollingUpdate{MaxSurge: num(2), MaxUnavailable: num(1), Partition: 4})
	e.settle()
	old := revisionHashOf(e.spec.last().UpdateRevision)
	e.rollTo("v2", 2, 1)
	for range 5 {
		e.reconcile("web")
		e.catchUp()
	}
	st := e.spec.last()
	updated := revisionHashOf(st.UpdateRevision)
	assert.Equal(t, map[string]int{old: 4, updated: 6}, e.hashes())
	assert.Equal(t, old, revisionHashOf(st.CurrentRevision))
	assert.EqualValues(t, 6, st.UpdatedReplicas)
	assert.EqualValues(t, 4, st.CurrentReplicas)

	e.setPartition(0)
	e.settle()
	assert.Equal(t, map[string]int{updated: 10}, e.hashes())
	assert.Equal(t, st.UpdateRevision, e.spec.last().CurrentRevision)
}

// Within the partition a missing child is created again at the current
// revision, from the template that revision records.
func TestRolloutPartitionRecreatesAtCurrent(t *testing.T) {
	e := newRollEnv(t, 3, childset.RollingUpdate{MaxSurge: num(1), MaxUnavailable: num(0), Partition: 3})
	e.settle()
	old := e.spec.last().UpdateRevision
	e.setVersion("v2")
	e.reconcile("web")
	require.Equal(t, map[string]int{revisionHashOf(old): 3}, e.hashes(), "the partition covers every child")
	victim := e.apiChildren()[0].Name
	require.NoError(t, e.client.CoreV1().ConfigMaps(ns).Delete(context.Background(), victim, metav1.DeleteOptions{}))
	e.catchUp()
	e.reconcile("web")
	assert.Equal(t, map[string]int{revisionHashOf(old): 3}, e.hashes())
	for _, cm := range e.apiChildren() {
		assert.Equal(t, "v1", cm.Data["version"], "%s is created from the current revision's template", cm.Name)
	}
}

// Indexed children are replaced in place of their index, highest first,
// never two for one index.
func TestRolloutIndexedHighestFirst(t *testing.T) {
	e := newRollEnv(t, 5, childset.RollingUpdate{MaxSurge: num(0), MaxUnavailable: num(1)}, childset.WithIndexedNames(nil))
	e.settle()
	before := len(e.writes())
	e.setVersion("v2")
	e.steps(func(step int) {
		perIndex := map[string]int{}
		for _, cm := range e.apiChildren() {
			idx := cm.Labels[childset.IndexLabel]
			perIndex[idx]++
			if cm.Name != "web-"+idx {
				t.Fatalf("step %d: %s holds index %q", step, cm.Name, idx)
			}
			if perIndex[idx] > 1 {
				t.Fatalf("step %d: two children for index %s", step, idx)
			}
		}
		if avail := e.available(); avail < 4 {
			t.Fatalf("step %d: %d available, fewer than 5 - 1", step, avail)
		}
	})
	var deletes, creates []string
	for _, w := range e.writes()[before:] {
		if name, ok := strings.CutPrefix(w, "delete "); ok {
			deletes = append(deletes, name)
		}
		if name, ok := strings.CutPrefix(w, "create "); ok {
			creates = append(creates, name)
		}
	}
	want := names("web", 4, 3, 2, 1, 0)
	assert.Equal(t, want, deletes, "replaced highest index first")
	assert.Equal(t, want, creates, "each index created again after its deletion")
	st := e.spec.last()
	assert.Equal(t, map[string]int{revisionHashOf(st.UpdateRevision): 5}, e.hashes())
	assert.Equal(t, names("web", 0, 1, 2, 3, 4), e.apiNames())
}

// Going back to an earlier template reuses its revision, renumbered as
// the newest, instead of creating a third.
func TestRolloutRollbackReusesRevision(t *testing.T) {
	e := newRollEnv(t, 4, childset.RollingUpdate{MaxSurge: num(1), MaxUnavailable: num(1)})
	e.settle()
	v1Rev := e.spec.last().UpdateRevision
	e.rollTo("v2", 1, 1)
	v2Rev := e.spec.last().UpdateRevision
	require.Len(t, e.revisionList(), 2)

	e.rollTo("v1", 1, 1)
	st := e.spec.last()
	revs := e.revisionList()
	require.Len(t, revs, 2, "the rollback creates no revision")
	assert.Equal(t, v1Rev, st.UpdateRevision, "the v1 revision is reused")
	assert.Equal(t, []string{v2Rev, v1Rev}, []string{revs[0].Name, revs[1].Name}, "the reused revision is the newest")
	assert.EqualValues(t, 3, revs[1].Revision)
	assert.Equal(t, map[string]int{revisionHashOf(v1Rev): 4}, e.hashes())
}

// Revisions no child is at are pruned to the history limit, oldest first.
func TestRolloutHistoryPruned(t *testing.T) {
	e := newRollEnv(t, 2, childset.RollingUpdate{MaxSurge: num(1), MaxUnavailable: num(0)})
	e.spec.limit = 1
	e.settle()
	var updates []string
	for _, v := range []string{"v2", "v3", "v4"} {
		e.rollTo(v, 1, 0)
		updates = append(updates, e.spec.last().UpdateRevision)
	}
	e.reconcile("web")
	var kept []string
	for _, rev := range e.revisionList() {
		kept = append(kept, rev.Name)
	}
	assert.Equal(t, []string{updates[1], updates[2]}, kept, "the update revision and the newest idle one")
}

// A revision of other data holding the name the template's revision would
// take advances the collision count; the count is reported, and reused
// once persisted without creating another revision.
func TestRolloutCollisionCount(t *testing.T) {
	e := newRollEnv(t, 2, childset.RollingUpdate{})
	raw, err := json.Marshal(rolloutTemplate(e.owner))
	require.NoError(t, err)
	zero := int32(0)
	taken := history.ControllerRevisionName("web", history.HashControllerRevision(&appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: raw}}, &zero))
	squatter := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: taken, Labels: map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(e.owner, rsGVK)}},
		Data: runtime.RawExtension{Raw: []byte(`{"other":"data"}`)}, Revision: 1,
	}
	require.NoError(t, e.revisions.Add(squatter))

	e.reconcile("web")
	st := e.spec.last()
	assert.EqualValues(t, 1, st.CollisionCount)
	assert.NotEqual(t, taken, st.UpdateRevision)
	require.Len(t, e.revisionList(), 2)
	e.catchUp()
	assert.Equal(t, map[string]int{revisionHashOf(st.UpdateRevision): 2}, e.hashes())

	e.settle()
	assert.Len(t, e.revisionList(), 2, "the persisted count finds the same revision")
	assert.EqualValues(t, 1, e.spec.last().CollisionCount)
	assert.Equal(t, st.UpdateRevision, e.spec.last().UpdateRevision)
}

// Children without a revision label (from before rolling updates were
// turned on) are old, and replaced.
func TestRolloutReplacesUnlabelledChildren(t *testing.T) {
	e := newRollEnv(t, 3, childset.RollingUpdate{MaxSurge: num(1), MaxUnavailable: num(0)})
	for i := range 3 {
		cm := readyChild(fmt.Sprintf("web-old%d", i), e.owner, e.clock.Now())
		e.seed(cm)
	}
	e.settle()
	assert.Equal(t, map[string]int{revisionHashOf(e.spec.last().UpdateRevision): 3}, e.hashes())
}

// Bounds the API server would refuse get an event and no write.
func TestRolloutRefusesBadBounds(t *testing.T) {
	e := newRollEnv(t, 3, childset.RollingUpdate{MaxSurge: num(0), MaxUnavailable: num(0)})
	e.reconcile("web")
	assert.Empty(t, e.writes())
	assert.Empty(t, e.revisionList())
	evs := e.events()
	require.Len(t, evs, 1)
	assert.True(t, strings.HasPrefix(evs[0], "Warning "+childset.ReasonRollingUpdateInvalid), evs[0])
}

func TestRolloutNeedsRevisions(t *testing.T) {
	e := newEnv(t)
	kind := cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}
	assert.PanicsWithValue(t, "childset: NewReconciler: a Spec that implements RolloutSpec needs WithRevisions, and WithRevisions such a Spec", func() {
		childset.NewReconciler[*appsv1.ReplicaSet](&rolloutSpec{rsSpec: rsSpec{e.owners}}, kind, configMapControl(e.client, nil))
	})
	informer := informers.NewSharedInformerFactory(fake.NewClientset(), 0).Apps().V1().ControllerRevisions()
	assert.Panics(t, func() {
		childset.NewReconciler[*appsv1.ReplicaSet](rsSpec{e.owners}, kind, configMapControl(e.client, nil),
			childset.WithRevisions(history.NewFakeHistory(informer)))
	})
	assert.PanicsWithValue(t, "childset: WithRevisions: nil history", func() { childset.WithRevisions(nil) })
}

// An orphan revision the selector matches is adopted and reused: a
// re-created owner keeps its predecessor's history.
func TestRolloutAdoptsOrphanRevision(t *testing.T) {
	e := newRollEnv(t, 2, childset.RollingUpdate{})
	raw, err := json.Marshal(rolloutTemplate(e.owner))
	require.NoError(t, err)
	zero := int32(0)
	hash := history.HashControllerRevision(&appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: raw}}, &zero)
	orphan := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: history.ControllerRevisionName("web", hash), UID: "orphan-uid",
			Labels: map[string]string{"app": "web", history.ControllerRevisionHashLabel: hash}},
		Data: runtime.RawExtension{Raw: raw}, Revision: 7,
	}
	require.NoError(t, e.revisions.Add(orphan))
	e.reconcile("web")
	revs := e.revisionList()
	require.Len(t, revs, 1)
	assert.Equal(t, orphan.Name, e.spec.last().UpdateRevision)
	assert.True(t, metav1.IsControlledBy(revs[0], e.owner), "adopted: %v", revs[0].OwnerReferences)
	e.catchUp()
	assert.Equal(t, map[string]int{hash: 2}, e.hashes())
}

// Scaling in the middle of a rollout converges on the new number, all
// updated, within the bounds of the new number.
func TestRolloutScaleDuringRollout(t *testing.T) {
	e := newRollEnv(t, 10, childset.RollingUpdate{MaxSurge: num(2), MaxUnavailable: num(1)})
	e.settle()
	e.setVersion("v2")
	for range 2 {
		e.reconcile("web")
		e.catchUp()
	}
	e.owner = e.owner.DeepCopy()
	e.owner.Generation++
	*e.owner.Spec.Replicas = 4
	require.NoError(t, e.owners.Update(e.owner))
	e.steps(func(step int) {
		if total := len(e.apiChildren()); total > 10+2 {
			t.Fatalf("step %d: %d children", step, total)
		}
	})
	st := e.spec.last()
	assert.Equal(t, map[string]int{revisionHashOf(st.UpdateRevision): 4}, e.hashes())
	assert.EqualValues(t, 4, st.UpdatedReplicas)
}

// An indexed partition keeps the indices below it at the current revision.
func TestRolloutIndexedPartition(t *testing.T) {
	e := newRollEnv(t, 5, childset.RollingUpdate{MaxSurge: num(0), MaxUnavailable: num(2), Partition: 2},
		childset.WithIndexedNames(nil))
	e.settle()
	old := revisionHashOf(e.spec.last().UpdateRevision)
	e.setVersion("v2")
	e.settle()
	updated := revisionHashOf(e.spec.last().UpdateRevision)
	for _, cm := range e.apiChildren() {
		want := updated
		if cm.Name == "web-0" || cm.Name == "web-1" {
			want = old
		}
		assert.Equal(t, want, cm.Labels[history.ControllerRevisionHashLabel], cm.Name)
	}
}

// An owner whose RollingUpdate says false is synced as without rollouts:
// no revision, no label, children of an older template kept.
func TestRolloutOptedOut(t *testing.T) {
	e := newRollEnv(t, 3, childset.RollingUpdate{})
	e.spec.off = true
	e.settle()
	e.setVersion("v2")
	e.settle()
	assert.Empty(t, e.revisionList())
	assert.Equal(t, map[string]int{"": 3}, e.hashes())
	for _, cm := range e.apiChildren() {
		assert.Equal(t, "v1", cm.Data["version"])
	}
	assert.Equal(t, childset.Status{Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, ObservedGeneration: 2}, e.spec.last())
}

// Children that take time to go away still count against maxSurge, and an
// index is created again only once its old holder is gone: no name
// conflict, never two children for one index.
func TestRolloutGracefulDeletions(t *testing.T) {
	for _, indexed := range []bool{false, true} {
		t.Run(fmt.Sprintf("indexed=%v", indexed), func(t *testing.T) {
			var opts []childset.Option
			if indexed {
				opts = append(opts, childset.WithIndexedNames(nil))
			}
			e := newRollEnv(t, 6, childset.RollingUpdate{MaxSurge: num(2), MaxUnavailable: num(1)}, opts...)
			e.deleteGracefully()
			e.settle()
			sawTerminating := false
			e.setVersion("v2")
			e.steps(func(step int) {
				children := e.apiChildren()
				sawTerminating = sawTerminating || len(e.terminating()) > 0
				if len(children) > 6+2 {
					t.Fatalf("step %d: %d children counting those being deleted, more than 6 + 2", step, len(children))
				}
				if avail := e.available(); avail < 6-1 {
					t.Fatalf("step %d: %d available, fewer than 6 - 1", step, avail)
				}
			})
			assert.True(t, sawTerminating, "children lingered while being deleted")
			assert.Empty(t, e.events(), "no name conflict")
			st := e.spec.last()
			assert.Equal(t, map[string]int{revisionHashOf(st.UpdateRevision): 6}, e.hashes())
		})
	}
}

// A revision that cannot be pruned holds no rollout back.
func TestRolloutPruneFailureDoesNotBlock(t *testing.T) {
	e := newRollEnv(t, 2, childset.RollingUpdate{MaxSurge: num(1), MaxUnavailable: num(0)})
	e.spec.limit = 0
	e.settle()
	// An idle revision whose deletion fails.
	stuck := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-stuck", Labels: map[string]string{"app": "web"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(e.owner, rsGVK)}}, Revision: 0}
	require.NoError(t, e.revisions.Add(stuck))
	e.history.refuse = "web-stuck"
	e.rollTo("v2", 1, 0)
	assert.Equal(t, map[string]int{revisionHashOf(e.spec.last().UpdateRevision): 2}, e.hashes())
	var kept []string
	for _, rev := range e.revisionList() {
		kept = append(kept, rev.Name)
	}
	assert.Equal(t, []string{"web-stuck", e.spec.last().UpdateRevision}, kept, "the v1 revision pruned, the stuck one kept")
}

// bareRolloutSpec rolls out as rolloutSpec does, for a kind with neither a
// history limit nor a collision count in its objects.
type bareRolloutSpec struct {
	rsSpec
	s *rolloutSpec
}

func (b bareRolloutSpec) NewChild(rs *appsv1.ReplicaSet) (*v1.ConfigMap, error) {
	return b.s.NewChild(rs)
}
func (b bareRolloutSpec) RollingUpdate(rs *appsv1.ReplicaSet) (childset.RollingUpdate, bool) {
	return b.s.RollingUpdate(rs)
}
func (b bareRolloutSpec) UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet, st childset.Status) error {
	return b.s.UpdateStatus(ctx, rs, st)
}

// A RolloutSpec without HistoryLimitSpec keeps DefaultRevisionHistoryLimit
// idle revisions; one without CollisionCountSpec finds its revision again
// by content after a collision, without persisting the count.
func TestRolloutWithoutHistoryLimitOrCollisionCount(t *testing.T) {
	e := newRollEnv(t, 1, childset.RollingUpdate{MaxSurge: num(1), MaxUnavailable: num(0)})
	e.r = childset.NewReconciler[*appsv1.ReplicaSet](bareRolloutSpec{rsSpec: e.spec.rsSpec, s: e.spec},
		readySinceKind{cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}}, configMapControl(e.client, nil),
		childset.WithEventRecorder(e.recorder), childset.WithClock(e.clock), childset.WithRevisions(e.history))
	raw, err := json.Marshal(rolloutTemplate(e.owner))
	require.NoError(t, err)
	zero := int32(0)
	taken := history.ControllerRevisionName("web", history.HashControllerRevision(&appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: raw}}, &zero))
	require.NoError(t, e.revisions.Add(&appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: taken, Labels: map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(e.owner, rsGVK)}},
		Data: runtime.RawExtension{Raw: []byte(`{"other":"data"}`)}, Revision: 1,
	}))
	e.settle()
	first := e.spec.last().UpdateRevision
	assert.NotEqual(t, taken, first)
	e.settle()
	assert.Equal(t, first, e.spec.last().UpdateRevision, "the same revision, found by its content")
	assert.Len(t, e.revisionList(), 2)

	for i := range childset.DefaultRevisionHistoryLimit + 2 {
		e.rollTo(fmt.Sprintf("v%d", i+2), 1, 0)
	}
	e.reconcile("web")
	assert.Len(t, e.revisionList(), childset.DefaultRevisionHistoryLimit+1, "the update revision and the newest idle ones")
}

// countingReady counts the readiness reads of a sync.
type countingReady struct {
	readySinceKind
	reads *int
}

func (k countingReady) Ready(c *v1.ConfigMap) bool {
	*k.reads++
	return k.readySinceKind.Ready(c)
}

// A rolling sync reads each child's readiness once: for the plan's order,
// its availability and the status alike.
func TestRolloutReadsReadinessOnce(t *testing.T) {
	e := newRollEnv(t, 6, childset.RollingUpdate{MaxSurge: num(2), MaxUnavailable: num(1)})
	e.settle()
	reads := 0
	e.r = childset.NewReconciler[*appsv1.ReplicaSet](e.spec,
		countingReady{readySinceKind{cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}}, &reads},
		configMapControl(e.client, nil), childset.WithEventRecorder(e.recorder), childset.WithClock(e.clock),
		childset.WithRevisions(e.history))
	e.setVersion("v2")
	e.reconcile("web")
	assert.Equal(t, 6, reads, "one read for each of the 6 children")
	assert.NotEmpty(t, e.spec.last().UpdateRevision, "the sync rolled out")
}
