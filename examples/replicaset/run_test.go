package replicaset

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// TestRunAgainstSimulatedCluster runs the whole controller, with its default
// client-go pod control and event broadcaster, against the simulated
// cluster: it scales an owner of each kind up and down, then shuts down
// leaving no goroutine behind.
func TestRunAgainstSimulatedCluster(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, k := range bothKinds {
		t.Run(k.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			ctx, cancel := context.WithCancel(ctx)
			cluster := simcluster.New(simcluster.WithStartupDelay(10 * time.Millisecond))
			simDone := make(chan struct{})
			go func() { defer close(simDone); _ = cluster.Run(ctx) }()
			client := cluster.Client()
			f := informers.NewSharedInformerFactory(client, 0)
			c, err := k.build(ctx, client, f, podset.WithWorkers(2))
			require.NoError(t, err)
			f.Start(ctx.Done())
			runDone := make(chan error, 1)
			go func() { runDone <- c.Run(ctx) }()

			o := k.newOwner(7, fooBar)
			o.SetResourceVersion("")
			o.SetOwnerReferences(nil)
			matchTemplateToSelector(o)
			createOwner(t, ctx, client, o)
			require.Eventually(t, func() bool { return readyPods(t, ctx, client) == 7 }, 20*time.Second, 10*time.Millisecond)
			require.Eventually(t, c.HasSynced, time.Second, time.Millisecond)
			scaleOwner(t, ctx, client, k, 2)
			require.Eventually(t, func() bool { return countPods(t, ctx, client) == 2 }, 20*time.Second, 10*time.Millisecond)

			cancel()
			select {
			case err := <-runDone:
				require.NoError(t, err)
			case <-time.After(30 * time.Second):
				t.Fatal("Run did not return after its context was cancelled")
			}
			assert.False(t, c.HasSynced(), "not ready once shut down")
			f.Shutdown()
			<-simDone
			require.Error(t, c.Run(ctx), "Run twice")
		})
	}
}

// matchTemplateToSelector makes the pod template carry the selector's
// labels, as API validation requires of real owners.
func matchTemplateToSelector(o metav1.Object) {
	switch x := o.(type) {
	case *appsv1.ReplicaSet:
		x.Spec.Template.Labels = fooBar
	case *v1.ReplicationController:
		x.Spec.Template.Labels = fooBar
	}
}

func createOwner(t *testing.T, ctx context.Context, client kubernetes.Interface, o metav1.Object) {
	t.Helper()
	var err error
	switch x := o.(type) {
	case *appsv1.ReplicaSet:
		_, err = client.AppsV1().ReplicaSets(x.Namespace).Create(ctx, x, metav1.CreateOptions{})
	case *v1.ReplicationController:
		_, err = client.CoreV1().ReplicationControllers(x.Namespace).Create(ctx, x, metav1.CreateOptions{})
	}
	require.NoError(t, err)
}

func scaleOwner(t *testing.T, ctx context.Context, client kubernetes.Interface, k testKind, n int32) {
	t.Helper()
	require.Eventually(t, func() bool {
		var err error
		if k.name == "ReplicaSet" {
			rs, gerr := client.AppsV1().ReplicaSets("default").Get(ctx, "foobar", metav1.GetOptions{})
			require.NoError(t, gerr)
			rs.Spec.Replicas = ptr.To(n)
			_, err = client.AppsV1().ReplicaSets("default").Update(ctx, rs, metav1.UpdateOptions{})
		} else {
			rc, gerr := client.CoreV1().ReplicationControllers("default").Get(ctx, "foobar", metav1.GetOptions{})
			require.NoError(t, gerr)
			rc.Spec.Replicas = ptr.To(n)
			_, err = client.CoreV1().ReplicationControllers("default").Update(ctx, rc, metav1.UpdateOptions{})
		}
		return err == nil // retry on conflict with the controller's status writes
	}, 10*time.Second, 10*time.Millisecond)
}

func listPods(t *testing.T, ctx context.Context, client kubernetes.Interface) []v1.Pod {
	t.Helper()
	l, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	return l.Items
}

func countPods(t *testing.T, ctx context.Context, client kubernetes.Interface) int {
	return len(listPods(t, ctx, client))
}

func readyPods(t *testing.T, ctx context.Context, client kubernetes.Interface) int {
	n := 0
	for _, p := range listPods(t, ctx, client) {
		if p.Status.Phase == v1.PodRunning {
			n++
		}
	}
	return n
}

func TestConstructorOptionsMisuse(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewSimpleClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	pods := f.Core().V1().Pods()
	// Options with impossible values panic at the call, naming themselves.
	for name, build := range map[string]func(){
		"WithBurstReplicas": func() { podset.WithBurstReplicas(0) }, "WithWorkers": func() { podset.WithWorkers(-1) },
		"WithDrainTimeout": func() { podset.WithDrainTimeout(-1) }, "WithWriteTimeout": func() { podset.WithWriteTimeout(0) },
	} {
		// The options shared with the set core are childset's, and say so.
		msg := panicValue(build)
		assert.True(t, strings.Contains(msg, "podset: "+name+": ") || strings.Contains(msg, "childset: "+name+": "), "%s: %s", name, msg)
	}
	// Nil hooks are taken: the constructor succeeds (a nil recorder
	// records no events; the others keep the defaults).
	for name, opt := range map[string]Option{
		"recorder": podset.WithEventRecorder(nil), "metrics": podset.WithMetricsProvider(nil), "pod control": podset.WithPodControl(nil),
		"reporter": podset.WithScaleDownReporter(nil), "gates": podset.WithFeatureGates(nil), "nil option": nil,
	} {
		c, err := NewReplicaSetController(ctx, client, pods, f.Apps().V1().ReplicaSets(), opt)
		require.NoError(t, err, name)
		assert.NotNil(t, c, name)
	}
	// Both kinds can share one pod informer.
	_, err := NewReplicaSetController(ctx, client, pods, f.Apps().V1().ReplicaSets())
	require.NoError(t, err)
	_, err = NewReplicationManager(ctx, client, pods, f.Core().V1().ReplicationControllers())
	require.NoError(t, err)
}

// panicValue returns what f panics with, as a string.
func panicValue(f func()) (v string) {
	defer func() { v = fmt.Sprint(recover()) }()
	f()
	return "no panic"
}

// TestRunReturnsWhenCachesNeverSync: cancelling before the caches sync still
// returns nil and leaks nothing.
func TestRunReturnsWhenCachesNeverSync(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewSimpleClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	c, err := NewReplicaSetController(ctx, client, f.Core().V1().Pods(), f.Apps().V1().ReplicaSets(), podset.WithDrainTimeout(0))
	require.NoError(t, err)
	c.Queue().Add("default/x") // never handed out: no worker runs
	ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	require.NoError(t, c.Run(ctx))
}

// TestWatchOwnersAndPods follows upstream's TestWatchControllers and
// TestWatchPods: an owner added through the API, then a failed pod of it,
// each reach the work queue through the informers.
func TestWatchOwnersAndPods(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, k := range bothKinds {
		t.Run(k.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			ctx, cancel := context.WithCancel(ctx)
			client := fake.NewSimpleClientset()
			f := informers.NewSharedInformerFactory(client, 0)
			defer func() { cancel(); f.Shutdown() }()
			c, err := k.build(ctx, client, f)
			require.NoError(t, err)
			f.Start(ctx.Done())
			f.WaitForCacheSync(ctx.Done())
			defer c.Queue().ShutDown()

			// No worker runs: the test takes the keys from the queue.
			o := k.newOwner(1, fooBar)
			createOwner(t, ctx, client, o)
			var keys []string
			seen := func() int {
				keys = append(keys, queued(c)...)
				n := 0
				for _, got := range keys {
					if got == key(o) {
						n++
					}
				}
				return n
			}
			require.Eventually(t, func() bool { return seen() >= 1 }, 10*time.Second, 5*time.Millisecond)
			before := seen()
			pod := newPod("failed", o, k, v1.PodFailed, fooBar, true)
			_, err = client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
			require.NoError(t, err)
			require.Eventually(t, func() bool { return seen() > before }, 10*time.Second, 5*time.Millisecond)
		})
	}
}
