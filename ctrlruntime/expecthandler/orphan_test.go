package expecthandler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/expecthandler"
)

func replicaSet(ns, name string, selector *metav1.LabelSelector) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)},
		Spec: appsv1.ReplicaSetSpec{Selector: selector}}
}

func rsSelector(rs *appsv1.ReplicaSet) *metav1.LabelSelector { return rs.Spec.Selector }

func labelledPod(name, rv string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv, Labels: lbls}}
}

func orphanFixture(t *testing.T, opts ...func(*fake.ClientBuilder)) (*expecthandler.OrphanHandler[client.Object, *appsv1.ReplicaSet], *ctrlruntime.Queue[reconcileRequest]) {
	t.Helper()
	web := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	b := fake.NewClientBuilder().WithObjects(
		replicaSet("ns", "web", web),
		replicaSet("ns", "web-too", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}}}}),
		replicaSet("ns", "db", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}),
		replicaSet("ns", "empty", &metav1.LabelSelector{}),
		replicaSet("ns", "no-selector", nil),
		replicaSet("ns", "invalid", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: "Bogus"}}}),
		replicaSet("other-ns", "web", web),
	)
	for _, opt := range opts {
		opt(b)
	}
	q := ctrlruntime.NewTypedQueue[reconcileRequest]("orphans", nil)
	t.Cleanup(q.ShutDown)
	return expecthandler.NewOrphanHandler(b.Build(), &appsv1.ReplicaSetList{}, rsSelector), q
}

func TestOrphanCreateEnqueuesMatchingOwners(t *testing.T) {
	ctx := context.Background()
	h, q := orphanFixture(t)

	h.Create(ctx, event.CreateEvent{Object: labelledPod("p", "1", map[string]string{"app": "web"})}, q)
	assert.Equal(t, map[string]int{"ns/web": 0, "ns/web-too": 0}, drain(t, q),
		"owners in the namespace whose selector matches; empty, missing and invalid selectors match nothing")

	h.Create(ctx, event.CreateEvent{Object: labelledPod("p", "1", map[string]string{"app": "api"}), IsInInitialList: true}, q)
	assert.Equal(t, map[string]int{"ns/web-too": handler.LowPriority}, drain(t, q))

	h.Create(ctx, event.CreateEvent{Object: labelledPod("p", "1", map[string]string{"app": "none"})}, q)
	owned := labelledPod("owned", "1", map[string]string{"app": "web"})
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "uid-web", Controller: ptr.To(true)}}
	h.Create(ctx, event.CreateEvent{Object: owned}, q)
	terminating := labelledPod("terminating", "1", map[string]string{"app": "web"})
	terminating.DeletionTimestamp = ptr.To(metav1.Now())
	h.Create(ctx, event.CreateEvent{Object: terminating}, q)
	h.Create(ctx, event.CreateEvent{}, q)
	assert.Zero(t, q.Len(), "no match, an owned object, a terminating orphan and an empty event enqueue nothing")
}

func TestOrphanUpdates(t *testing.T) {
	ctx := context.Background()
	h, q := orphanFixture(t)
	web := map[string]string{"app": "web"}

	p1 := labelledPod("p", "1", web)
	h.Update(ctx, event.UpdateEvent{ObjectOld: p1, ObjectNew: p1.DeepCopy()}, q)
	p2 := labelledPod("p", "2", web)
	h.Update(ctx, event.UpdateEvent{ObjectOld: p1, ObjectNew: p2}, q)
	assert.Zero(t, q.Len(), "a resync, or an update that changes neither labels nor owner, enqueues nothing")

	p3 := labelledPod("p", "3", map[string]string{"app": "db"})
	h.Update(ctx, event.UpdateEvent{ObjectOld: p2, ObjectNew: p3}, q)
	assert.Equal(t, map[string]int{"ns/db": 0}, drain(t, q), "new labels: the owners matching them")

	owned := labelledPod("p", "4", web)
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "uid-web", Controller: ptr.To(true)}}
	released := labelledPod("p", "5", web)
	h.Update(ctx, event.UpdateEvent{ObjectOld: owned, ObjectNew: released}, q)
	assert.Equal(t, map[string]int{"ns/web": 0, "ns/web-too": 0}, drain(t, q), "released: the owners that may adopt it")

	h.Update(ctx, event.UpdateEvent{ObjectOld: released, ObjectNew: owned}, q)
	terminating := labelledPod("p", "6", map[string]string{"app": "db"})
	terminating.DeletionTimestamp = ptr.To(metav1.Now())
	h.Update(ctx, event.UpdateEvent{ObjectOld: released, ObjectNew: terminating}, q)
	h.Update(ctx, event.UpdateEvent{}, q)
	h.Delete(ctx, event.DeleteEvent{Object: released}, q)
	assert.Zero(t, q.Len(), "adopted, terminating, empty and deleted objects enqueue nothing")

	h.Generic(ctx, event.GenericEvent{Object: released}, q)
	assert.Equal(t, map[string]int{"ns/web": 0, "ns/web-too": 0}, drain(t, q))
	h.Generic(ctx, event.GenericEvent{}, q)
	assert.Zero(t, q.Len())
}

func TestOrphanListFailureEnqueuesNothing(t *testing.T) {
	ctx := context.Background()
	h, q := orphanFixture(t, func(b *fake.ClientBuilder) {
		b.WithInterceptorFuncs(interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return errors.New("cache not started")
		}})
	})
	h.Create(ctx, event.CreateEvent{Object: labelledPod("p", "1", map[string]string{"app": "web"})}, q)
	assert.Zero(t, q.Len())
}

func TestTypedOrphanHandler(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithObjects(replicaSet("ns", "web", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}})).Build()
	var h handler.TypedEventHandler[*corev1.Pod, reconcileRequest] = expecthandler.NewTypedOrphanHandler[*corev1.Pod](c, &appsv1.ReplicaSetList{}, rsSelector)
	q := ctrlruntime.NewTypedQueue[reconcileRequest]("orphans-typed", nil)
	defer q.ShutDown()
	h.Create(ctx, event.TypedCreateEvent[*corev1.Pod]{Object: labelledPod("p", "1", map[string]string{"app": "web"})}, q)
	assert.Equal(t, map[string]int{"ns/web": 0}, drain(t, q))

	require.PanicsWithValue(t, "expecthandler: NewOrphanHandler: nil reader", func() {
		expecthandler.NewOrphanHandler(nil, &appsv1.ReplicaSetList{}, rsSelector)
	})
	require.PanicsWithValue(t, "expecthandler: NewOrphanHandler: nil owner list", func() {
		expecthandler.NewOrphanHandler(c, nil, rsSelector)
	})
	require.PanicsWithValue(t, "expecthandler: NewOrphanHandler: nil selector func", func() {
		expecthandler.NewOrphanHandler[*appsv1.ReplicaSet](c, &appsv1.ReplicaSetList{}, nil)
	})
}
