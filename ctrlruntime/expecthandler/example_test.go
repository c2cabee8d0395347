package expecthandler_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/expecthandler"
)

// The pattern, for a controller whose owner kind (here a ConfigMap) keeps
// pods. In a manager it is wired as
//
//	tracker := expecthandler.NewTracker(schema.GroupKind{Group: "example.io", Kind: "PodGroup"})
//	ctrl.NewControllerManagedBy(mgr).
//		For(&v1.PodGroup{}).
//		Watches(&corev1.Pod{}, tracker.Handler()).
//		Complete(r)
//
// and Reconcile gates on tracker.Satisfied and calls tracker.ExpectCreations
// before it creates. Here the handler's events are delivered by hand.
func Example() {
	ctx := context.Background()
	tracker := expecthandler.NewTracker(schema.GroupKind{Kind: "ConfigMap"})
	queue := ctrlruntime.NewTypedQueue[reconcile.Request]("example-pods", nil)
	defer queue.ShutDown()

	group := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "group", UID: "uid-1"}}

	// Reconcile: the cache shows no pods and nothing is pending, so it
	// creates two and says so first.
	fmt.Println("satisfied before:", tracker.Satisfied(group))
	_ = tracker.ExpectCreations(group, 2)
	// ... two creates through the client ...

	// A second Reconcile before the cache has the pods must not create again.
	fmt.Println("satisfied after the creates:", tracker.Satisfied(group))

	// The informer delivers the two pods; the handler observes them and
	// enqueues the group.
	for _, name := range []string{"group-a", "group-b"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap",
				Name: "group", UID: "uid-1", Controller: ptr.To(true)}}}}
		tracker.Handler().Create(ctx, event.CreateEvent{Object: pod}, queue)
	}
	req, _ := queue.Get()
	fmt.Println("enqueued:", req)
	fmt.Println("satisfied once observed:", tracker.Satisfied(group))
	// Output:
	// satisfied before: true
	// satisfied after the creates: false
	// enqueued: ns/group
	// satisfied once observed: true
}
