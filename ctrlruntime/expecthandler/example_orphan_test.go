package expecthandler_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/expecthandler"
)

// The orphan handler enqueues the owners that may adopt a pod nobody
// controls. In a manager, with the tracker's handler for owned pods:
//
//	ctrl.NewControllerManagedBy(mgr).
//		For(&appsv1.ReplicaSet{}).
//		Watches(&corev1.Pod{}, tracker.Handler()).
//		Watches(&corev1.Pod{}, expecthandler.NewOrphanHandler(mgr.GetClient(), &appsv1.ReplicaSetList{},
//			func(rs *appsv1.ReplicaSet) *metav1.LabelSelector { return rs.Spec.Selector })).
//		Complete(r)
//
// Here the client is a fake and the event is delivered by hand.
func ExampleNewOrphanHandler() {
	ctx := context.Background()
	rs := func(name, app string) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
	}
	c := fake.NewClientBuilder().WithObjects(rs("web", "web"), rs("db", "db")).Build()
	orphans := expecthandler.NewOrphanHandler(c, &appsv1.ReplicaSetList{},
		func(rs *appsv1.ReplicaSet) *metav1.LabelSelector { return rs.Spec.Selector })
	queue := ctrlruntime.NewTypedQueue[reconcile.Request]("example-orphans", nil)
	defer queue.ShutDown()

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "stray", Labels: map[string]string{"app": "web"}}}
	orphans.Create(ctx, event.CreateEvent{Object: pod}, queue)
	req, _ := queue.Get()
	fmt.Println("enqueued:", req, "queued after it:", queue.Len())
	// Output:
	// enqueued: ns/web queued after it: 0
}

// A controller that names its pods expects the names: a pod someone else
// created with the same controller reference does not satisfy it.
func ExampleTracker_ExpectCreationsNamed() {
	ctx := context.Background()
	tracker := expecthandler.NewTracker(schema.GroupKind{Group: "apps", Kind: "StatefulSet"})
	queue := ctrlruntime.NewTypedQueue[reconcile.Request]("example-named", nil)
	defer queue.ShutDown()
	owner := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", UID: "uid-1"}}
	ref := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "uid-1", Controller: ptr.To(true)}
	observe := func(name string) {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: []metav1.OwnerReference{ref}}}
		tracker.Handler().Create(ctx, event.CreateEvent{Object: pod}, queue)
	}

	_ = tracker.ExpectCreationsNamed(owner, []string{"db-0", "db-1"})
	observe("db-0")
	observe("intruder")
	fmt.Println("satisfied:", tracker.Satisfied(owner))
	observe("db-1")
	fmt.Println("satisfied:", tracker.Satisfied(owner))
	// Output:
	// satisfied: false
	// satisfied: true
}
