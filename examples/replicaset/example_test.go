package replicaset_test

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// waitForPods polls until n pods are Running, or gives up after 20 s.
func waitForPods(ctx context.Context, client kubernetes.Interface, n int) int {
	deadline := time.Now().Add(20 * time.Second)
	for {
		list, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		running := 0
		if err == nil {
			for _, p := range list.Items {
				if p.Status.Phase == v1.PodRunning {
					running++
				}
			}
		}
		if running == n || time.Now().After(deadline) {
			return running
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func webTemplate() v1.PodTemplateSpec {
	return v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "web", Image: "nginx"}}},
	}
}

// startSimulatedCluster starts the simulated cluster the example binary
// uses, until ctx is done; wait waits for it to stop.
func startSimulatedCluster(ctx context.Context) (client kubernetes.Interface, wait func()) {
	cluster := simcluster.New(simcluster.WithStartupDelay(10 * time.Millisecond))
	done := make(chan struct{})
	go func() { defer close(done); _ = cluster.Run(ctx) }()
	return cluster.Client(), func() { <-done }
}

// runOnSimulatedCluster starts the simulated cluster the example binary
// uses, builds a controller with build, starts the informers and the
// controller, creates an owner with create and waits for its pods. Any
// kubernetes.Interface works the same way.
func runOnSimulatedCluster(
	build func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (*replicaset.Controller, error),
	create func(ctx context.Context, client kubernetes.Interface) error,
	pods int,
) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client, stopCluster := startSimulatedCluster(ctx)
	defer func() { cancel(); stopCluster() }()

	factory := informers.NewSharedInformerFactory(client, 0)
	defer func() { cancel(); factory.Shutdown() }()
	c, err := build(ctx, client, factory)
	if err != nil {
		fmt.Println(err)
		return
	}
	factory.Start(ctx.Done()) // after the constructor: it registers its index
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()

	if err := create(ctx, client); err != nil {
		fmt.Println(err)
	}
	fmt.Println("running pods:", waitForPods(ctx, client, pods))
	c.Drain() // a graceful stop: Run syncs what is queued, then returns nil
	fmt.Println("Run returned:", <-done)
}

func ExampleNewReplicaSetController() {
	runOnSimulatedCluster(
		func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (*replicaset.Controller, error) {
			return replicaset.NewReplicaSetController(ctx, client, f.Core().V1().Pods(), f.Apps().V1().ReplicaSets(),
				podset.WithWorkers(2), podset.WithBurstReplicas(100))
		},
		func(ctx context.Context, client kubernetes.Interface) error {
			_, err := client.AppsV1().ReplicaSets("default").Create(ctx, &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
				Spec: appsv1.ReplicaSetSpec{
					Replicas: ptr.To[int32](3),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
					Template: webTemplate(),
				},
			}, metav1.CreateOptions{})
			return err
		}, 3)
	// Output:
	// running pods: 3
	// Run returned: <nil>
}

// ReplicationControllers go through the same core; only the constructor,
// the informer and the selector's form differ.
func ExampleNewReplicationManager() {
	runOnSimulatedCluster(
		func(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory) (*replicaset.Controller, error) {
			return replicaset.NewReplicationManager(ctx, client, f.Core().V1().Pods(), f.Core().V1().ReplicationControllers())
		},
		func(ctx context.Context, client kubernetes.Interface) error {
			tmpl := webTemplate()
			_, err := client.CoreV1().ReplicationControllers("default").Create(ctx, &v1.ReplicationController{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
				Spec: v1.ReplicationControllerSpec{
					Replicas: ptr.To[int32](2),
					Selector: map[string]string{"app": "web"}, // equality, not a LabelSelector
					Template: &tmpl,
				},
			}, metav1.CreateOptions{})
			return err
		}, 2)
	// Output:
	// running pods: 2
	// Run returned: <nil>
}
