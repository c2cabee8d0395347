package expecthandler_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/expecthandler"
)

var configMapKind = schema.GroupKind{Kind: "ConfigMap"}

func TestCreateObservesAndEnqueuesOwner(t *testing.T) {
	ctx := context.Background()
	tr := expecthandler.NewTracker(configMapKind)
	h := tr.Handler()
	q := ctrlruntime.NewTypedQueue[reconcileRequest]("handler-create", nil)
	defer q.ShutDown()
	o := owner("group", "uid-1")

	require.NoError(t, tr.ExpectCreations(o, 2))
	assert.False(t, tr.Satisfied(o))
	h.Create(ctx, event.CreateEvent{Object: ownedPod("p1", "1", o)}, q)
	assert.False(t, tr.Satisfied(o))
	h.Create(ctx, event.CreateEvent{Object: ownedPod("p2", "1", o), IsInInitialList: true}, q)
	assert.True(t, tr.Satisfied(o))
	assert.Equal(t, map[string]int{"ns/group": 0}, drain(t, q), "a live event keeps the owner at the default priority")

	h.Create(ctx, event.CreateEvent{Object: ownedPod("p3", "1", o), IsInInitialList: true}, q)
	assert.Equal(t, map[string]int{"ns/group": handler.LowPriority}, drain(t, q), "the initial list goes in at low priority")
}

func TestObjectsOfOtherOwnersAreIgnored(t *testing.T) {
	ctx := context.Background()
	tr := expecthandler.NewTracker(configMapKind)
	h := tr.Handler()
	q := ctrlruntime.NewTypedQueue[reconcileRequest]("handler-ignore", nil)
	defer q.ShutDown()
	o := owner("group", "uid-1")
	require.NoError(t, tr.ExpectCreations(o, 1))

	orphan := ownedPod("orphan", "1", nil)
	otherKind := ownedPod("other", "1", o)
	otherKind.OwnerReferences[0].APIVersion = "apps/v1"
	notController := ownedPod("not-controller", "1", o)
	notController.OwnerReferences[0].Controller = nil
	badVersion := ownedPod("bad-version", "1", o)
	badVersion.OwnerReferences[0].APIVersion = "a/b/c"
	for _, p := range []*corev1.Pod{orphan, otherKind, notController, badVersion} {
		h.Create(ctx, event.CreateEvent{Object: p}, q)
		h.Delete(ctx, event.DeleteEvent{Object: p}, q)
		h.Generic(ctx, event.GenericEvent{Object: p}, q)
	}
	h.Create(ctx, event.CreateEvent{}, q)
	h.Update(ctx, event.UpdateEvent{}, q)
	h.Delete(ctx, event.DeleteEvent{}, q)
	h.Generic(ctx, event.GenericEvent{}, q)
	assert.Equal(t, 0, q.Len())
	assert.False(t, tr.Satisfied(o))
}

func TestDeletionsAreTrackedByKey(t *testing.T) {
	ctx := context.Background()
	tr := expecthandler.NewTracker(configMapKind)
	h := tr.Handler()
	q := ctrlruntime.NewTypedQueue[reconcileRequest]("handler-delete", nil)
	defer q.ShutDown()
	o := owner("group", "uid-1")
	p1, p2 := ownedPod("p1", "1", o), ownedPod("p2", "1", o)
	require.NoError(t, tr.ExpectDeletions(o, []client.Object{p1, p2}))

	// A pod nobody asked to delete does not count.
	h.Delete(ctx, event.DeleteEvent{Object: ownedPod("stranger", "1", o)}, q)
	assert.False(t, tr.Satisfied(o))

	// The deletion timestamp is the observation; later updates and the final
	// delete of the same pod do not count twice.
	terminating := p1.DeepCopy()
	terminating.ResourceVersion = "2"
	terminating.DeletionTimestamp = ptr.To(metav1.Now())
	h.Update(ctx, event.UpdateEvent{ObjectOld: p1, ObjectNew: terminating}, q)
	again := terminating.DeepCopy()
	again.ResourceVersion = "3"
	h.Update(ctx, event.UpdateEvent{ObjectOld: terminating, ObjectNew: again}, q)
	h.Delete(ctx, event.DeleteEvent{Object: again}, q)
	assert.False(t, tr.Satisfied(o))
	assert.Equal(t, []string{"ns/p2"}, tr.Expectations().PendingDeletions("ns/group@uid-1"))

	assert.Equal(t, map[string]int{"ns/group": 0}, drain(t, q))

	// A restarted controller lists a terminating pod as a create.
	p2Terminating := p2.DeepCopy()
	p2Terminating.DeletionTimestamp = ptr.To(metav1.Now())
	h.Create(ctx, event.CreateEvent{Object: p2Terminating, IsInInitialList: true}, q)
	assert.True(t, tr.Satisfied(o))
	assert.Equal(t, map[string]int{"ns/group": handler.LowPriority}, drain(t, q))
}

func TestUpdates(t *testing.T) {
	ctx := context.Background()
	tr := expecthandler.NewTracker(configMapKind)
	h := tr.Handler()
	q := ctrlruntime.NewTypedQueue[reconcileRequest]("handler-update", nil)
	defer q.ShutDown()
	a, b := owner("a", "uid-a"), owner("b", "uid-b")

	// A resync (same resource version) is ignored.
	p := ownedPod("p", "1", a)
	h.Update(ctx, event.UpdateEvent{ObjectOld: p, ObjectNew: p.DeepCopy()}, q)
	assert.Equal(t, 0, q.Len())

	// A real update enqueues the owner.
	p2 := p.DeepCopy()
	p2.ResourceVersion = "2"
	h.Update(ctx, event.UpdateEvent{ObjectOld: p, ObjectNew: p2}, q)
	assert.Equal(t, map[string]int{"ns/a": 0}, drain(t, q))

	// A controller reference moving from a to b enqueues both.
	p3 := ownedPod("p", "3", b)
	h.Update(ctx, event.UpdateEvent{ObjectOld: p2, ObjectNew: p3}, q)
	assert.Equal(t, map[string]int{"ns/a": 0, "ns/b": 0}, drain(t, q))

	// Released (no controller any more): the old owner is enqueued.
	p4 := ownedPod("p", "4", nil)
	h.Update(ctx, event.UpdateEvent{ObjectOld: p3, ObjectNew: p4}, q)
	assert.Equal(t, map[string]int{"ns/b": 0}, drain(t, q))
}

// A deleted and re-created owner has a new UID: observations for the old
// one never satisfy, nor block, the new one.
func TestRecreatedOwnerHasItsOwnRecord(t *testing.T) {
	ctx := context.Background()
	tr := expecthandler.NewTracker(configMapKind)
	h := tr.Handler()
	q := ctrlruntime.NewTypedQueue[reconcileRequest]("handler-recreate", nil)
	defer q.ShutDown()
	old, recreated := owner("group", "uid-old"), owner("group", "uid-new")
	require.NoError(t, tr.ExpectCreations(old, 1))
	assert.True(t, tr.Satisfied(recreated), "the new incarnation does not inherit the old record")
	require.NoError(t, tr.ExpectCreations(recreated, 1))
	h.Create(ctx, event.CreateEvent{Object: ownedPod("p-old", "1", old)}, q)
	assert.False(t, tr.Satisfied(recreated))
	h.Create(ctx, event.CreateEvent{Object: ownedPod("p-new", "1", recreated)}, q)
	assert.True(t, tr.Satisfied(recreated))

	tr.Forget(old)
	assert.True(t, tr.Satisfied(old))
}

func TestFailedWritesLowerExpectations(t *testing.T) {
	tr := expecthandler.NewTracker(configMapKind)
	o := owner("group", "uid-1")
	p := ownedPod("p", "1", o)
	require.NoError(t, tr.ExpectCreations(o, 1))
	tr.CreationFailed(o)
	assert.True(t, tr.Satisfied(o))
	require.NoError(t, tr.ExpectDeletions(o, []client.Object{p}))
	tr.DeletionFailed(o, p)
	assert.True(t, tr.Satisfied(o))
	assert.Equal(t, configMapKind, tr.OwnerKind())
}

func TestTypedHandler(t *testing.T) {
	ctx := context.Background()
	tr := expecthandler.NewTracker(configMapKind)
	var h handler.TypedEventHandler[*corev1.Pod, reconcileRequest] = expecthandler.NewHandler[*corev1.Pod](tr)
	q := ctrlruntime.NewTypedQueue[reconcileRequest]("handler-typed", nil)
	defer q.ShutDown()
	o := owner("group", "uid-1")
	require.NoError(t, tr.ExpectCreations(o, 1))
	h.Create(ctx, event.TypedCreateEvent[*corev1.Pod]{Object: ownedPod("p", "1", o)}, q)
	assert.True(t, tr.Satisfied(o))
	assert.Equal(t, 1, q.Len())
}
