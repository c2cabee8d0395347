package childset_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ctrlkit/ctrlkit/childset"
)

// The optional parts of a Spec and a Kind that specialise the core (pods
// use every one): traits read once per child object, finished children,
// a Spec's own victims, a status computed from the children, and the
// per-sync gates, sync guard and metrics.

// hookSpec is rsSpec with every hook, each recording its calls.
type hookSpec struct {
	rsSpec
	traitReads atomic.Int32
	victims    [][]string // the active children each Victims call was given
	seen       []childset.Seen[*v1.ConfigMap]
	statuses   []childset.Status
}

// traitMarked is the bit hookSpec's Traits sets for a child annotated
// "mark".
const traitMarked childset.Traits = 1 << 1

func (s *hookSpec) Traits(*appsv1.ReplicaSet) func(*v1.ConfigMap) childset.Traits {
	return func(cm *v1.ConfigMap) childset.Traits {
		s.traitReads.Add(1)
		var t childset.Traits
		if cm.Annotations["ready"] == "true" {
			t |= childset.TraitReady
		}
		if cm.Annotations["mark"] != "" {
			t |= traitMarked
		}
		return t
	}
}

func (*hookSpec) TraitsKey(rs *appsv1.ReplicaSet) string { return rs.Annotations["traits"] }

// Victims deletes the children named last first.
func (s *hookSpec) Victims(_ *appsv1.ReplicaSet, active []*v1.ConfigMap, _ []childset.Traits, n int) []*v1.ConfigMap {
	names := make([]string, len(active))
	for i, c := range active {
		names[i] = c.Name
	}
	s.victims = append(s.victims, names)
	sorted := slices.Clone(active)
	slices.SortFunc(sorted, func(a, b *v1.ConfigMap) int { return -compareStrings(a.Name, b.Name) })
	return sorted[:n]
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (s *hookSpec) UpdateChildStatus(_ context.Context, rs *appsv1.ReplicaSet, st childset.Status, seen childset.Seen[*v1.ConfigMap]) (*appsv1.ReplicaSet, error) {
	s.statuses = append(s.statuses, st)
	s.seen = append(s.seen, seen)
	return rs, nil
}

// finishingKind calls a child annotated "finished" finished.
type finishingKind struct{ cmKind }

func (finishingKind) Finished(cm *v1.ConfigMap) bool { return cm.Annotations["finished"] == "true" }

func newHookEnv(t *testing.T, opts ...childset.Option) (*env, *hookSpec) {
	e := newEnv(t)
	spec := &hookSpec{rsSpec: rsSpec{e.owners}}
	e.r = childset.NewReconciler[*appsv1.ReplicaSet](spec, finishingKind{cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}},
		configMapControl(e.client, nil), append([]childset.Option{childset.WithClock(e.clock), childset.WithEventRecorder(e.recorder)}, opts...)...)
	return e, spec
}

func annotated(cm *v1.ConfigMap, kv ...string) *v1.ConfigMap {
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		cm.Annotations[kv[i]] = kv[i+1]
	}
	return cm
}

// Traits are read once per child object: a second sync over the same
// objects reads none, a changed object is read again, and a change of the
// owner's traits key reads them all. The status gets them with the
// children; finished children are neither active nor terminating.
func TestTraitsAreReadOncePerObject(t *testing.T) {
	e, spec := newHookEnv(t)
	owner := newOwner("web", 3)
	e.addOwner(owner)
	lbl := map[string]string{"app": "web"}
	deleting := newChild("web-deleting", owner, lbl)
	deleting.DeletionTimestamp = &metav1.Time{Time: e.clock.Now()}
	e.seed(
		annotated(newChild("web-a", owner, lbl), "ready", "true", "mark", "x"),
		annotated(newChild("web-b", owner, lbl), "ready", "true"),
		newChild("web-c", owner, lbl),
		annotated(newChild("web-done", owner, lbl), "finished", "true"),
		deleting,
	)
	e.reconcile("web")
	assert.EqualValues(t, 3, spec.traitReads.Load(), "the three active children, once each")
	require.Len(t, spec.seen, 1)
	got := spec.seen[0]
	// In the listing's order, which the index does not fix.
	traits := map[string]childset.Traits{}
	for i, c := range got.Active {
		traits[c.Name] = got.Traits[i]
	}
	assert.Equal(t, map[string]childset.Traits{"web-a": childset.TraitReady | traitMarked, "web-b": childset.TraitReady, "web-c": 0}, traits)
	assert.Equal(t, []string{"web-deleting"}, cmNames(got.Terminating))
	assert.Equal(t, childset.Status{Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 2, TerminatingReplicas: 1}, spec.statuses[0])
	assert.Empty(t, e.writes(), "a finished child is not replaced while three are active")

	e.reconcile("web")
	assert.EqualValues(t, 3, spec.traitReads.Load(), "no child read again")

	changed := annotated(newChild("web-c", owner, lbl), "ready", "true")
	require.NoError(t, e.children.Update(changed))
	e.reconcile("web")
	assert.EqualValues(t, 4, spec.traitReads.Load(), "the changed child alone")
	assert.EqualValues(t, 3, spec.statuses[len(spec.statuses)-1].ReadyReplicas)

	rekeyed := owner.DeepCopy()
	rekeyed.Annotations = map[string]string{"traits": "v2"}
	require.NoError(t, e.owners.Update(rekeyed))
	e.reconcile("web")
	assert.EqualValues(t, 7, spec.traitReads.Load(), "a new traits key reads every child again")
}

// A finished child does not count: the owner creates another in its place.
func TestFinishedChildrenAreReplaced(t *testing.T) {
	e, _ := newHookEnv(t)
	owner := newOwner("web", 1)
	e.addOwner(owner)
	e.seed(annotated(newChild("web-done", owner, map[string]string{"app": "web"}), "finished", "true"))
	e.reconcile("web")
	assert.Equal(t, 1, countPrefix(e.writes(), "create "), "one create: %v", e.writes())
}

// A child being deleted is counted when the owner controls it and its
// selector matches it, and never adopted or released, as upstream's
// ReplicaSet leaves its terminating pods alone.
func TestTerminatingChildrenAreNotClaimed(t *testing.T) {
	e, spec := newHookEnv(t)
	owner := newOwner("web", 0)
	e.addOwner(owner)
	now := &metav1.Time{Time: e.clock.Now()}
	orphan := newChild("orphan", nil, map[string]string{"app": "web"})
	orphan.DeletionTimestamp = now
	unselected := newChild("web-relabelled", owner, map[string]string{"app": "other"})
	unselected.DeletionTimestamp = now
	e.seed(orphan, unselected)
	e.reconcile("web")
	assert.Empty(t, e.writes(), "no adoption, no release")
	assert.Empty(t, spec.seen[0].Terminating, "neither is the owner's")
}

// A VictimSpec chooses the children a scale-down deletes; the core sends
// the deletes.
func TestVictimSpecChoosesTheVictims(t *testing.T) {
	e, spec := newHookEnv(t)
	owner := newOwner("web", 1)
	e.addOwner(owner)
	for _, name := range []string{"web-a", "web-c", "web-b"} {
		e.seed(newChild(name, owner, map[string]string{"app": "web"}))
	}
	e.reconcile("web")
	require.Len(t, spec.victims, 1)
	assert.ElementsMatch(t, []string{"web-a", "web-b", "web-c"}, spec.victims[0])
	assert.ElementsMatch(t, []string{"delete web-c", "delete web-b"}, e.writes())
}

// A refused spec writes the status with SpecErr, counting the children
// the owner already controls, and writes nothing else.
func TestRefusedSpecWritesTheStatus(t *testing.T) {
	e, spec := newHookEnv(t)
	owner := newOwner("web", 3)
	owner.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "elsewhere"}}
	e.addOwner(owner)
	e.seed(annotated(newChild("web-a", owner, map[string]string{"app": "web"}), "ready", "true"))
	e.reconcile("web")
	assert.Empty(t, e.writes())
	require.Len(t, spec.statuses, 1)
	st := spec.statuses[0]
	require.NotNil(t, st.SpecErr)
	assert.Equal(t, childset.ReasonSelectorMismatch, st.SpecErr.Reason)
	assert.EqualValues(t, 1, st.Replicas, "the child it controls")
	assert.EqualValues(t, 1, st.ReadyReplicas)
	assert.Len(t, e.events(), 1, "one Warning event")
}

// The gates are asked at every sync: with DeploymentReplicaSetTerminatingReplicas
// off, the children being deleted are not counted.
func TestFeatureGatesAreAskedEverySync(t *testing.T) {
	var terminatingOn atomic.Bool
	e, spec := newHookEnv(t, childset.WithFeatureGates(func(feature string) bool {
		return feature == childset.DeploymentReplicaSetTerminatingReplicas && terminatingOn.Load()
	}))
	owner := newOwner("web", 0)
	e.addOwner(owner)
	deleting := newChild("web-deleting", owner, map[string]string{"app": "web"})
	deleting.DeletionTimestamp = &metav1.Time{Time: e.clock.Now()}
	e.seed(deleting)
	e.reconcile("web")
	terminatingOn.Store(true)
	e.reconcile("web")
	assert.EqualValues(t, 0, spec.statuses[0].TerminatingReplicas, "off")
	assert.Nil(t, spec.seen[0].Terminating, "off")
	assert.EqualValues(t, 1, spec.statuses[1].TerminatingReplicas, "on at the next sync")
}

type syncRecorder struct{ errs []error }

func (m *syncRecorder) ObserveSync(_ string, _ time.Duration, err error) {
	m.errs = append(m.errs, err)
}

// A sync guard that refuses skips the sync, which asks to be looked at
// again when the guard says; every sync is reported to the metrics.
func TestSyncGuardAndMetrics(t *testing.T) {
	var held atomic.Bool
	metrics := &syncRecorder{}
	e, _ := newHookEnv(t, childset.WithSyncMetrics(metrics),
		childset.WithSyncGuard(func(ctx context.Context, _ string) (context.Context, func(), time.Duration, bool) {
			if !held.Load() {
				return nil, nil, 3 * time.Second, false
			}
			return ctx, func() {}, 0, true
		}))
	e.addOwner(newOwner("web", 2))
	res := e.reconcile("web")
	assert.Equal(t, 3*time.Second, res.RequeueAfter)
	assert.Empty(t, e.writes(), "not held: nothing written")
	held.Store(true)
	e.reconcile("web")
	assert.Equal(t, 2, countPrefix(e.writes(), "create "))
	assert.Equal(t, []error{nil, nil}, metrics.errs)
}

// A ready child whose ready time is unknown is looked at again a whole
// minReadySeconds later, so that it is counted available some time.
func TestAvailabilityWithoutAReadyTimeIsLookedAtAgain(t *testing.T) {
	e := newEnv(t)
	spec := &statusSpec{rsSpec: rsSpec{e.owners}}
	e.r = childset.NewReconciler[*appsv1.ReplicaSet](spec, readySinceKind{cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}},
		configMapControl(e.client, nil), childset.WithClock(e.clock))
	owner := newOwner("web", 1)
	owner.Spec.MinReadySeconds = 30
	e.addOwner(owner)
	e.seed(annotated(newChild("web-a", owner, map[string]string{"app": "web"}), "ready", "true"))
	res := e.reconcile("web")
	assert.EqualValues(t, 0, spec.written[0].AvailableReplicas)
	assert.Equal(t, 30*time.Second, res.RequeueAfter)
}

// The errors a refused status write and a selector error give are the
// sync's: a failed status write of a refused spec fails the sync.
func TestRefusedSpecStatusWriteFailureFailsTheSync(t *testing.T) {
	e := newEnv(t)
	spec := &statusSpec{rsSpec: rsSpec{e.owners}, err: errors.New("conflict")}
	e.r = childset.NewReconciler[*appsv1.ReplicaSet](spec, cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)},
		configMapControl(e.client, nil))
	owner := newOwner("web", 1)
	owner.Spec.Selector = &metav1.LabelSelector{}
	e.addOwner(owner)
	_, err := e.r.Reconcile(context.Background(), ns+"/web")
	require.ErrorContains(t, err, "conflict")
	assert.Empty(t, e.apiChildren())
}

func cmNames(cms []*v1.ConfigMap) []string {
	out := make([]string, len(cms))
	for i, c := range cms {
		out[i] = c.Name
	}
	return out
}

// The Observe methods return the owners to sync: the controller, or for an
// orphan the owners WithOwnerLister lists that may adopt it; a deletion the
// informer missed wakes the owners that select the last state too.
func TestObserveReturnsTheOwnersToSync(t *testing.T) {
	e := newEnv(t)
	web, db := newOwner("web", 1), newOwner("db", 1)
	db.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	owners := []*appsv1.ReplicaSet{web, db}
	r := childset.NewReconciler[*appsv1.ReplicaSet](rsSpec{e.owners}, cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)},
		configMapControl(e.client, nil), childset.WithOwnerLister(func(string) ([]*appsv1.ReplicaSet, error) { return owners, nil }))
	orphan := newChild("orphan", nil, map[string]string{"app": "web"})
	owned := newChild("web-a", web, map[string]string{"app": "web"})
	assert.Equal(t, []string{ns + "/web"}, r.ObserveAdd(orphan), "the owner that selects the orphan")
	assert.Equal(t, []string{ns + "/web"}, r.ObserveAdd(owned))
	assert.Equal(t, []string{ns + "/web"}, r.OwnerKeys(orphan))

	relabelled := orphan.DeepCopy()
	relabelled.Labels = map[string]string{"app": "db"}
	relabelled.ResourceVersion = "2"
	assert.Equal(t, []string{ns + "/db"}, r.ObserveUpdate(orphan, relabelled), "its labels changed")
	released := owned.DeepCopy()
	released.OwnerReferences = nil
	released.ResourceVersion = "2"
	assert.Empty(t, r.ObserveUpdate(relabelled, relabelled), "a resync changed nothing")
	assert.Equal(t, []string{ns + "/web", ns + "/web"}, r.ObserveUpdate(owned, released), "the old controller, and the adopter")

	// A deletion the informer missed: the last state names web, and db
	// selects it.
	stale := newChild("stale", web, map[string]string{"app": "db"})
	assert.Equal(t, []string{ns + "/web"}, r.ObserveDelete(stale, false))
	assert.Equal(t, []string{ns + "/web", ns + "/db"}, r.ObserveDelete(stale, true))

	without := childset.NewReconciler[*appsv1.ReplicaSet](rsSpec{e.owners}, cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)},
		configMapControl(e.client, nil))
	assert.Empty(t, without.ObserveAdd(orphan), "no lister: the owners adopt it at their next sync")
	assert.Panics(t, func() {
		childset.NewReconciler[*appsv1.ReplicaSet](rsSpec{e.owners}, cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)},
			configMapControl(e.client, nil), childset.WithOwnerLister(func(string) ([]*v1.Secret, error) { return nil, nil }))
	}, "a lister of another owner type")
}
