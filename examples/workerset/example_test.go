package workerset_test

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic/dynamicinformer"

	"github.com/ctrlkit/ctrlkit/examples/workerset"
)

// A WorkerSet of three on the dynamic fake client (newFakeClient adds what
// the fake lacks and an apiserver does: names from generateName, UIDs and
// creation timestamps). Against a cluster, build the client with
// dynamic.NewForConfig and install workerset.CRD first.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	dyn := newFakeClient(newSet("pool", int64(3)))
	factory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	c, err := workerset.NewController(ctx, dyn, factory)
	if err != nil {
		cancel()
		fmt.Println(err)
		return
	}
	factory.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()

	workers := dyn.Resource(workerset.WorkerResource).Namespace("default")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if list, err := workers.List(ctx, metav1.ListOptions{}); err == nil && len(list.Items) == 3 {
			break
		}
	}
	list, _ := workers.List(ctx, metav1.ListOptions{})
	for _, w := range list.Items {
		fmt.Println(w.GetKind(), w.GetLabels()["app"], "controlled by", metav1.GetControllerOf(&w).Name)
	}
	cancel()
	fmt.Println("Run:", <-done)
	factory.Shutdown()
	// Output:
	// Worker pool controlled by pool
	// Worker pool controlled by pool
	// Worker pool controlled by pool
	// Run: <nil>
}
