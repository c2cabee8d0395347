package expecthandler_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/expecthandler"
)

// The side-by-side: one PodGroup-like controller (a ConfigMap whose
// annotation says how many pods it wants), written twice. The naive one is
// what controller-runtime users write today: list the owned pods from the
// cache, create the difference. The ctrlkit one adds a Tracker: Reconcile
// waits until its earlier creations are observed, and the handler observes
// them. Both run against controller-runtime's fake client as the API server,
// behind the same lagging cache, driven by the same burst of owner events.

const replicasAnnotation = "example.ctrlkit.io/replicas"

// laggingCache is an informer cache that sees a pod only when its create
// event is delivered, `lag` reconciles after the API server created it.
type laggingCache struct {
	mu        sync.Mutex
	lag       int
	visible   []*corev1.Pod
	pending   []pendingEvent
	reconcile int
	deliver   func(*corev1.Pod) // the controller's pod handler, if any
}

type pendingEvent struct {
	pod *corev1.Pod
	due int
}

func (c *laggingCache) created(pod *corev1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, pendingEvent{pod: pod.DeepCopy(), due: c.reconcile + c.lag})
}

// tick advances one reconcile and delivers the events now due.
func (c *laggingCache) tick() {
	c.mu.Lock()
	c.reconcile++
	var due []*corev1.Pod
	rest := c.pending[:0]
	for _, e := range c.pending {
		if e.due <= c.reconcile {
			due = append(due, e.pod)
		} else {
			rest = append(rest, e)
		}
	}
	c.pending = rest
	c.visible = append(c.visible, due...)
	deliver := c.deliver
	c.mu.Unlock()
	for _, p := range due {
		if deliver != nil {
			deliver(p)
		}
	}
}

func (c *laggingCache) podsOf(owner metav1.Object) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, p := range c.visible {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == owner.GetUID() {
			n++
		}
	}
	return n
}

// podGroupReconciler is the controller; tracker nil makes it the naive one.
type podGroupReconciler struct {
	api     client.Client
	cache   *laggingCache
	tracker *expecthandler.Tracker
}

func (r *podGroupReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	group := &corev1.ConfigMap{}
	if err := r.api.Get(ctx, req.NamespacedName, group); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if r.tracker != nil && !r.tracker.Satisfied(group) {
		return reconcile.Result{}, nil // the pod handler enqueues the group once the cache caught up
	}
	want, err := strconv.Atoi(group.Annotations[replicasAnnotation])
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("group %s: bad %s: %w", req, replicasAnnotation, err)
	}
	diff := want - r.cache.podsOf(group)
	if diff <= 0 {
		return reconcile.Result{}, nil
	}
	if r.tracker != nil {
		if err := r.tracker.ExpectCreations(group, diff); err != nil {
			return reconcile.Result{}, err
		}
	}
	for range diff {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace:       group.Namespace,
			GenerateName:    group.Name + "-",
			OwnerReferences: []metav1.OwnerReference{controllerRef(group)},
		}}
		if err := r.api.Create(ctx, pod); err != nil {
			if r.tracker != nil {
				r.tracker.CreationFailed(group)
			}
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

type sideBySideResult struct {
	created    int // pods in the API server at the end
	maxCreated int // the most pods the API server held at any sampled instant
}

// runPodGroup drives one controller through burst owner events, each
// followed by one reconcile, then keeps reconciling until the cache has
// caught up; it samples the API server's pod count after every reconcile.
func runPodGroup(t *testing.T, withExpectations bool, replicas, lag, burst int) sideBySideResult {
	t.Helper()
	ctx := context.Background()
	group := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: "group", UID: "group-uid",
		Annotations: map[string]string{replicasAnnotation: strconv.Itoa(replicas)},
	}}
	cache := &laggingCache{lag: lag}
	api := fake.NewClientBuilder().WithObjects(group).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := c.Create(ctx, obj, opts...); err != nil {
				return err
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				cache.created(pod)
			}
			return nil
		},
	}).Build()

	queue := ctrlruntime.NewTypedQueue[reconcile.Request]("side-by-side", nil)
	defer queue.ShutDown()
	r := &podGroupReconciler{api: api, cache: cache}
	if withExpectations {
		r.tracker = expecthandler.NewTracker(configMapKind)
		h := r.tracker.Handler()
		cache.deliver = func(p *corev1.Pod) { h.Create(ctx, event.CreateEvent{Object: p}, queue) }
	}

	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(group)}
	var res sideBySideResult
	sample := func() {
		pods := &corev1.PodList{}
		require.NoError(t, api.List(ctx, pods, client.InNamespace("ns")))
		res.created = len(pods.Items)
		res.maxCreated = max(res.maxCreated, res.created)
	}
	for range burst + lag + 1 {
		_, err := r.Reconcile(ctx, req)
		require.NoError(t, err)
		sample()
		cache.tick()
	}
	return res
}

func TestSideBySideNaiveOverCreatesCtrlkitNever(t *testing.T) {
	for _, tc := range []struct{ replicas, lag, burst int }{
		{replicas: 10, lag: 3, burst: 20},
		{replicas: 50, lag: 4, burst: 6},
	} {
		t.Run(fmt.Sprintf("replicas=%d lag=%d burst=%d", tc.replicas, tc.lag, tc.burst), func(t *testing.T) {
			naive := runPodGroup(t, false, tc.replicas, tc.lag, tc.burst)
			ctrlkit := runPodGroup(t, true, tc.replicas, tc.lag, tc.burst)
			t.Logf("want %d pods: naive created %d (max %d), ctrlkit created %d (max %d)",
				tc.replicas, naive.created, naive.maxCreated, ctrlkit.created, ctrlkit.maxCreated)
			assert.Greater(t, naive.maxCreated, tc.replicas, "the naive controller over-creates behind a lagging cache")
			assert.Equal(t, tc.replicas, ctrlkit.maxCreated, "the ctrlkit controller never exceeds the desired count")
			assert.Equal(t, tc.replicas, ctrlkit.created)
		})
	}
}
