package ctrlruntime_test

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
)

// One line switches a controller to ctrlkit's queue; the builder form is
//
//	ctrl.NewControllerManagedBy(mgr).For(&v1.MyKind{}).
//		WithOptions(controller.Options{NewQueue: ctrlruntime.NewQueue}).
//		Complete(r)
//
// controller-runtime then hands the queue the priorities its handlers set:
// objects from the initial list come after real changes.
func Example() {
	opts := controller.Options{NewQueue: ctrlruntime.NewQueue}
	_ = opts

	q := ctrlruntime.NewTypedQueue[string]("example-queue", nil)
	defer q.ShutDown()
	low := handler.LowPriority
	q.AddWithOpts(priorityqueue.AddOpts{Priority: &low}, "default/listed-at-start")
	q.AddWithOpts(priorityqueue.AddOpts{}, "default/just-changed")
	for range 2 {
		key, priority, _ := q.GetWithPriority()
		fmt.Println(key, priority)
		q.Done(key)
	}
	// Output:
	// default/just-changed 0
	// default/listed-at-start -100
}
