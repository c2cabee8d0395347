package simcluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

func pendingPod(generateName string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: generateName, Namespace: "default"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "i"}}},
	}
}

func TestAPIMetadata(t *testing.T) {
	ctx := context.Background()
	c := New()
	pods := c.Client().CoreV1().Pods("default")

	a, err := pods.Create(ctx, pendingPod("web-"), metav1.CreateOptions{})
	require.NoError(t, err)
	b, err := pods.Create(ctx, pendingPod("web-"), metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Regexp(t, "^web-[bcdfghjklmnpqrstvwxz2456789]{5}$", a.Name)
	assert.NotEqual(t, a.Name, b.Name)
	assert.NotEmpty(t, a.UID)
	assert.NotEqual(t, a.UID, b.UID)
	assert.False(t, a.CreationTimestamp.IsZero())
	assert.NotEqual(t, a.ResourceVersion, b.ResourceVersion)

	_, err = pods.Create(ctx, pendingPod(""), metav1.CreateOptions{})
	assert.True(t, apierrors.IsBadRequest(err), "no name and no generateName: %v", err)

	// An update bumps the resourceVersion and keeps the server's identity.
	upd := a.DeepCopy()
	upd.Labels = map[string]string{"x": "y"}
	upd.UID = "forged"
	got, err := pods.Update(ctx, upd, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.NotEqual(t, a.ResourceVersion, got.ResourceVersion)
	assert.Equal(t, a.UID, got.UID)

	// A stale resourceVersion conflicts.
	_, err = pods.Update(ctx, a, metav1.UpdateOptions{})
	assert.True(t, apierrors.IsConflict(err), "stale update: %v", err)

	// A patch bumps it too.
	patched, err := pods.Patch(ctx, a.Name, types.MergePatchType, []byte(`{"metadata":{"labels":{"p":"q"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	assert.NotEqual(t, got.ResourceVersion, patched.ResourceVersion)
	assert.Equal(t, "q", patched.Labels["p"])

	require.NoError(t, pods.Delete(ctx, a.Name, metav1.DeleteOptions{}))
	_, err = pods.Get(ctx, a.Name, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err))

	nodes, err := c.Client().CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, nodes.Items, DefaultNodes)
	assert.Len(t, c.Nodes(), DefaultNodes)
}

func TestOptions(t *testing.T) {
	fixed := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	c := New(WithNodes(5), WithStartupDelay(-time.Second), WithClock(clocktesting.NewFakeClock(fixed)))
	assert.Len(t, c.Nodes(), 5)
	assert.Zero(t, c.delay, "negative delays count as zero")
	p, err := c.Client().CoreV1().Pods("default").Create(context.Background(), pendingPod("x-"), metav1.CreateOptions{})
	require.NoError(t, err)
	assert.True(t, p.CreationTimestamp.Time.Equal(fixed))
	assert.Empty(t, New(WithNodes(-1)).Nodes(), "no nodes at all")
}

func TestKubeletStartsPodsAndStops(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(context.Background())
	c := New(WithNodes(2), WithStartupDelay(20*time.Millisecond))
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	pods := c.Client().CoreV1().Pods("default")
	for range 4 {
		_, err := pods.Create(ctx, pendingPod("p-"), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		list, err := pods.List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		nodes := map[string]int{}
		for _, p := range list.Items {
			if p.Status.Phase != v1.PodRunning || p.Spec.NodeName == "" {
				return false
			}
			nodes[p.Spec.NodeName]++
		}
		return len(nodes) == 2
	}, 10*time.Second, 5*time.Millisecond, "every pod bound and Running, spread over both nodes")
	cancel()
	require.NoError(t, <-done)
	require.Error(t, c.Run(ctx), "Run twice")
}

// A pod created without a namespace in its object takes the request's, as
// on a real apiserver: the object returned, the stored one and the one sent
// to watches all carry it, so a controller whose pod control leaves it to
// the server (as upstream's does) finds its pods again, and the simulated
// kubelet can start them.
func TestCreateFillsNamespaceFromRequest(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := New(WithStartupDelay(time.Millisecond))
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	pods := c.Client().CoreV1().Pods("team-a")
	w, err := pods.Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()

	pod := pendingPod("web-")
	pod.Namespace = ""
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "team-a", created.Namespace)
	select {
	case e := <-w.ResultChan():
		got, ok := e.Object.(*v1.Pod)
		require.True(t, ok)
		assert.Equal(t, "team-a", got.Namespace, "the watch event carries the namespace")
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event")
	}
	require.Eventually(t, func() bool {
		p, err := pods.Get(ctx, created.Name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == v1.PodRunning
	}, 10*time.Second, 5*time.Millisecond, "the simulated kubelet starts the pod")
	cancel()
	<-done
}

// Five random characters collide now and then: among 10,000 generated names
// about three collisions are expected. The apiserver then tries other names,
// and so does simcluster, so creates with generateName don't fail at random.
func TestGenerateNameCollisionsAreRetried(t *testing.T) {
	c := New()
	pods := c.Client().CoreV1().Pods("default")
	ctx := context.Background()
	names := map[string]bool{}
	for range 10000 {
		p, err := pods.Create(ctx, pendingPod("web-"), metav1.CreateOptions{})
		require.NoError(t, err)
		require.False(t, names[p.Name], "name %s handed out twice", p.Name)
		names[p.Name] = true
	}
}
