package childsetcr_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
	"github.com/ctrlkit/ctrlkit/expectations"
)

type handlerFixture struct {
	c        client.Client
	core     *childset.Reconciler[*appsv1.ReplicaSet, *corev1.Pod]
	children *childsetcr.ChildHandler[*appsv1.ReplicaSet, *corev1.Pod]
	owners   *childsetcr.OwnerHandler[*appsv1.ReplicaSet, *corev1.Pod]
}

func newHandlerFixture(t *testing.T, objs ...client.Object) handlerFixture {
	t.Helper()
	c := fakeClient(t, interceptor.Funcs{}, objs...)
	core, err := childsetcr.NewCore(c, nil, nil, rsSpec{}, podKind{})
	require.NoError(t, err)
	return handlerFixture{c: c, core: core, children: childsetcr.NewChildHandler(core), owners: childsetcr.NewOwnerHandler(core)}
}

// The pending creations and deletions of rs.
func (f handlerFixture) pending(t *testing.T, rs *appsv1.ReplicaSet) (adds, dels int64) {
	t.Helper()
	rep, ok := f.core.Expectations().Pending(expectations.OwnerKeyFor(rs))
	require.True(t, ok, "rs has expectations")
	return rep.Adds, rep.Dels
}

// Each creation the handler sees lowers the owner's pending creations and
// enqueues it; a deletion lowers the pending deletions.
func TestChildHandlerObservesExpectations(t *testing.T) {
	ctx := context.Background()
	rs := replicaSet("web", 2, "web")
	f := newHandlerFixture(t, rs)
	r := childsetcr.NewReconciler(f.core)
	_, err := r.Reconcile(ctx, request("web"))
	require.NoError(t, err)
	adds, _ := f.pending(t, rs)
	require.Equal(t, int64(2), adds)

	pods := &corev1.PodList{}
	require.NoError(t, f.c.List(ctx, pods, client.InNamespace("ns")))
	require.Len(t, pods.Items, 2)
	q := newQueue(t)
	f.children.Create(ctx, event.CreateEvent{Object: &pods.Items[0]}, q)
	adds, _ = f.pending(t, rs)
	assert.Equal(t, int64(1), adds, "a creation observed lowers pending creations")
	assert.Equal(t, map[string]int{"ns/web": 0}, drain(t, q))

	// The second creation arrives in the initial list of a restarted
	// informer: low priority.
	f.children.Create(ctx, event.CreateEvent{Object: &pods.Items[1], IsInInitialList: true}, q)
	adds, _ = f.pending(t, rs)
	assert.Equal(t, int64(0), adds)
	assert.Equal(t, map[string]int{"ns/web": handler.LowPriority}, drain(t, q))

	// Scale down to zero: two deletions are expected, the handler sees one
	// as an update setting the deletion timestamp, one as a delete.
	cur := &appsv1.ReplicaSet{}
	require.NoError(t, f.c.Get(ctx, client.ObjectKeyFromObject(rs), cur))
	cur.Spec.Replicas = new(int32)
	require.NoError(t, f.c.Update(ctx, cur))
	_, err = r.Reconcile(ctx, request("web"))
	require.NoError(t, err)
	_, dels := f.pending(t, rs)
	require.Equal(t, int64(2), dels)

	terminating := pods.Items[0].DeepCopy()
	terminating.ResourceVersion += "1"
	terminating.DeletionTimestamp = &metav1.Time{}
	f.children.Update(ctx, event.UpdateEvent{ObjectOld: &pods.Items[0], ObjectNew: terminating}, q)
	_, dels = f.pending(t, rs)
	assert.Equal(t, int64(1), dels, "a deletion that began counts")
	f.children.Delete(ctx, event.DeleteEvent{Object: &pods.Items[1]}, q)
	_, dels = f.pending(t, rs)
	assert.Equal(t, int64(0), dels)
	assert.Equal(t, map[string]int{"ns/web": 0}, drain(t, q))
}

// Resyncs are ignored; a controller reference that moves enqueues both
// owners.
func TestChildHandlerUpdate(t *testing.T) {
	ctx := context.Background()
	web, db := replicaSet("web", 1, "web"), replicaSet("db", 1, "db")
	f := newHandlerFixture(t, web, db)
	q := newQueue(t)

	p := pod("ns", "p", "1", "web", web, "ReplicaSet")
	f.children.Update(ctx, event.UpdateEvent{ObjectOld: p, ObjectNew: p.DeepCopy()}, q)
	assert.Empty(t, drain(t, q), "a resync enqueues nothing")

	moved := pod("ns", "p", "2", "web", db, "ReplicaSet")
	f.children.Update(ctx, event.UpdateEvent{ObjectOld: p, ObjectNew: moved}, q)
	assert.Equal(t, map[string]int{"ns/web": 0, "ns/db": 0}, drain(t, q))

	// Released: the owners matching it may adopt it back.
	released := pod("ns", "p", "3", "web", nil, "")
	f.children.Update(ctx, event.UpdateEvent{ObjectOld: moved, ObjectNew: released}, q)
	assert.Equal(t, map[string]int{"ns/web": 0, "ns/db": 0}, drain(t, q), "db lost it, web matches it")

	// An orphan whose labels change to match db.
	relabelled := pod("ns", "p", "4", "db", nil, "")
	f.children.Update(ctx, event.UpdateEvent{ObjectOld: released, ObjectNew: relabelled}, q)
	assert.Equal(t, map[string]int{"ns/db": 0}, drain(t, q))

	// An orphan whose status alone changed concerns no one.
	again := relabelled.DeepCopy()
	again.ResourceVersion = "5"
	f.children.Update(ctx, event.UpdateEvent{ObjectOld: relabelled, ObjectNew: again}, q)
	assert.Empty(t, drain(t, q))
}

// An orphan enqueues the owners of its namespace whose selector matches
// it, and no one else; a child with a controller of another kind, or one
// being deleted, is no orphan to adopt.
func TestChildHandlerOrphans(t *testing.T) {
	ctx := context.Background()
	web, db := replicaSet("web", 1, "web"), replicaSet("db", 1, "db")
	empty := replicaSet("empty", 1, "web")
	empty.Spec.Selector = &metav1.LabelSelector{}
	bad := replicaSet("bad", 1, "web")
	bad.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
	elsewhere := replicaSet("web2", 1, "web")
	elsewhere.Namespace = "other"
	f := newHandlerFixture(t, web, db, empty, bad, elsewhere)
	q := newQueue(t)

	f.children.Create(ctx, event.CreateEvent{Object: pod("ns", "o", "1", "web", nil, "")}, q)
	assert.Equal(t, map[string]int{"ns/web": 0}, drain(t, q), "only web matches; empty and invalid selectors match nothing")

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", UID: "cm-uid"}}
	f.children.Create(ctx, event.CreateEvent{Object: pod("ns", "x", "1", "web", cm, "ConfigMap")}, q)
	assert.Empty(t, drain(t, q), "a pod a ConfigMap controls is not an orphan")

	deleting := pod("ns", "d", "1", "web", nil, "")
	deleting.DeletionTimestamp = &metav1.Time{}
	f.children.Create(ctx, event.CreateEvent{Object: deleting}, q)
	assert.Empty(t, drain(t, q), "no one adopts an orphan being deleted")

	f.children.Generic(ctx, event.GenericEvent{Object: pod("ns", "g", "1", "db", nil, "")}, q)
	assert.Equal(t, map[string]int{"ns/db": 0}, drain(t, q))
	f.children.Generic(ctx, event.GenericEvent{Object: pod("ns", "g", "1", "web", db, "ReplicaSet")}, q)
	assert.Equal(t, map[string]int{"ns/db": 0}, drain(t, q))

	f.children.Create(ctx, event.CreateEvent{Object: &corev1.ConfigMap{}}, q)
	assert.Empty(t, drain(t, q), "objects of another type are ignored")
}

// A deletion whose final state is unknown may concern an owner that held
// the child after the state the informer last saw: the matching owners are
// synced too. A plain deletion of an orphan concerns no one.
func TestChildHandlerDeleteStateUnknown(t *testing.T) {
	ctx := context.Background()
	web, db := replicaSet("web", 1, "web"), replicaSet("db", 1, "db")
	f := newHandlerFixture(t, web, db)
	q := newQueue(t)

	f.children.Delete(ctx, event.DeleteEvent{Object: pod("ns", "o", "1", "web", nil, "")}, q)
	assert.Empty(t, drain(t, q))
	f.children.Delete(ctx, event.DeleteEvent{Object: pod("ns", "o", "1", "web", nil, ""), DeleteStateUnknown: true}, q)
	assert.Equal(t, map[string]int{"ns/web": 0}, drain(t, q))
	f.children.Delete(ctx, event.DeleteEvent{Object: pod("ns", "o", "1", "web", db, "ReplicaSet"), DeleteStateUnknown: true}, q)
	assert.Equal(t, map[string]int{"ns/web": 0, "ns/db": 0}, drain(t, q), "db, named by the last state, and web, which may hold it since")
}

// An owner deletion forgets its expectations.
func TestOwnerHandlerForgetsExpectations(t *testing.T) {
	ctx := context.Background()
	rs := replicaSet("web", 2, "web")
	f := newHandlerFixture(t, rs)
	_, err := childsetcr.NewReconciler(f.core).Reconcile(ctx, request("web"))
	require.NoError(t, err)
	f.pending(t, rs)

	q := newQueue(t)
	f.owners.Create(ctx, event.CreateEvent{Object: rs}, q)
	f.owners.Update(ctx, event.UpdateEvent{ObjectOld: rs, ObjectNew: rs}, q)
	f.owners.Generic(ctx, event.GenericEvent{Object: rs}, q)
	_, ok := f.core.Expectations().Pending(expectations.OwnerKeyFor(rs))
	assert.True(t, ok, "only a deletion forgets")
	f.owners.Delete(ctx, event.DeleteEvent{Object: rs, DeleteStateUnknown: true}, q)
	_, ok = f.core.Expectations().Pending(expectations.OwnerKeyFor(rs))
	assert.False(t, ok)
	assert.Empty(t, drain(t, q), "the owner handler enqueues nothing: For does")
}
