package simcluster_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/ctrlkit/ctrlkit/simcluster"
)

// The simulated API assigns what an apiserver would: a generated name, a
// UID and a resourceVersion.
func ExampleNew() {
	c := simcluster.New(simcluster.WithNodes(2))
	pod, err := c.Client().CoreV1().Pods("default").Create(context.Background(), &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "web-", Namespace: "default"},
	}, metav1.CreateOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(pod.Name) == len("web-")+5, pod.UID != "", pod.ResourceVersion != "")
	fmt.Println(c.Nodes())
	// Output:
	// true true true
	// [sim-node-1 sim-node-2]
}

// With a fake clock the test decides when the simulated kubelet starts a
// pod: it is bound at once and becomes Running and Ready when the clock
// passes the startup delay.
func ExampleCluster_Run() {
	ctx, cancel := context.WithCancel(context.Background())
	clk := clocktesting.NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	c := simcluster.New(simcluster.WithNodes(1), simcluster.WithStartupDelay(time.Minute), simcluster.WithClock(clk))
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()

	pods := c.Client().CoreV1().Pods("default")
	_, _ = pods.Create(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}}, metav1.CreateOptions{})
	waitFor := func(phase v1.PodPhase) {
		for {
			if clk.HasWaiters() {
				clk.Step(time.Minute)
			}
			if p, _ := pods.Get(ctx, "web-0", metav1.GetOptions{}); p.Status.Phase == phase {
				fmt.Println(p.Spec.NodeName, p.Status.Phase)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitFor(v1.PodRunning)
	cancel()
	fmt.Println(<-done)
	// Output:
	// sim-node-1 Running
	// <nil>
}

// A held resource simulates a lagging informer cache: the write succeeds
// and reads see it, but watches get its event only on release.
func ExampleCluster_HoldWatches() {
	ctx := context.Background()
	c := simcluster.New(simcluster.WithNodes(0))
	pods := c.Client().CoreV1().Pods("default")
	w, _ := pods.Watch(ctx, metav1.ListOptions{})
	defer w.Stop()

	release := c.HoldWatches(v1.SchemeGroupVersion.WithResource("pods"))
	_, _ = pods.Create(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0"}}, metav1.CreateOptions{})
	_, err := pods.Get(ctx, "web-0", metav1.GetOptions{})
	fmt.Println("readable:", err == nil)
	select {
	case <-w.ResultChan():
		fmt.Println("event during the hold")
	case <-time.After(50 * time.Millisecond):
		fmt.Println("no event during the hold")
	}
	release()
	e := <-w.ResultChan()
	fmt.Println(e.Type, e.Object.(*v1.Pod).Name)
	// Output:
	// readable: true
	// no event during the hold
	// ADDED web-0
}
