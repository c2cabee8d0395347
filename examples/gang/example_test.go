package gang_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/examples/gang"
)

// A Gang of three ranks on fake clients: pods through the typed clientset,
// the Gang through the dynamic client. Against a cluster, build the clients
// from a rest.Config and install gang.CRD first.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	client := fake.NewClientset()
	dyn := newGangClient(newGang("mpi", int64(3)))
	pods := informers.NewSharedInformerFactory(client, 0)
	gangs := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	c, err := gang.NewController(ctx, client, pods.Core().V1().Pods(), gangs)
	if err != nil {
		cancel()
		fmt.Println(err)
		return
	}
	pods.Start(ctx.Done())
	gangs.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()

	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if list, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); err == nil && len(list.Items) == 3 {
			break
		}
	}
	list, _ := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	slices.SortFunc(list.Items, func(a, b v1.Pod) int { return strings.Compare(a.Name, b.Name) })
	for _, p := range list.Items {
		fmt.Println(p.Name, "index", p.Labels[childset.IndexLabel], "controlled by", metav1.GetControllerOf(&p).Name)
	}
	cancel()
	fmt.Println("Run:", <-done)
	pods.Shutdown()
	gangs.Shutdown()
	// Output:
	// mpi-0 index 0 controlled by mpi
	// mpi-1 index 1 controlled by mpi
	// mpi-2 index 2 controlled by mpi
	// Run: <nil>
}
