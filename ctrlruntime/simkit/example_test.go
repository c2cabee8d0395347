package simkit_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/simkit"
)

// A held kind makes the cache lag: the create succeeds and the cluster has
// it, but the cache shows it only after the release. In a test,
// kit.StartTest(t) replaces the Start goroutine and its cleanup.
func Example() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	kit, err := simkit.New(scheme)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- kit.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Println(err)
		}
	}()

	c := kit.Client()
	var pods corev1.PodList
	_ = c.List(ctx, &pods) // starts the pod informer and waits for it to sync

	release := kit.HoldWatches(&corev1.Pod{})
	_ = c.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "web-", Namespace: "default"}})
	_ = c.List(ctx, &pods)
	fmt.Println("cache during the hold:", len(pods.Items))
	_ = kit.APIReader().List(ctx, &pods)
	fmt.Println("cluster:", len(pods.Items))

	release()
	for c.List(ctx, &pods) == nil && len(pods.Items) == 0 {
		time.Sleep(time.Millisecond)
	}
	fmt.Println("cache after the release:", len(pods.Items))
	// Output:
	// cache during the hold: 0
	// cluster: 1
	// cache after the release: 1
}
