package simcluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

// Defaults for a cluster built without options.
const (
	DefaultNodes        = 3
	DefaultStartupDelay = 300 * time.Millisecond
)

// Cluster is an in-memory cluster: an API (client-go's fake clientset with
// apiserver-like metadata) plus a simulated scheduler and kubelet.
type Cluster struct {
	client  *fake.Clientset
	nodes   []string
	delay   time.Duration
	now     func() time.Time
	started sync.Once
}

// Option configures a Cluster.
type Option func(*Cluster)

// WithNodes sets how many fake nodes pods are spread over; values below 1
// are ignored so the cluster always has somewhere to put a pod.
func WithNodes(n int) Option {
	return func(c *Cluster) {
		if n < 1 {
			return
		}
		c.nodes = nodeNames(n)
	}
}

// WithStartupDelay sets how long a new pod stays Pending before the simulated
// kubelet reports it Running and Ready. Negative values count as zero.
func WithStartupDelay(d time.Duration) Option {
	return func(c *Cluster) { c.delay = max(d, 0) }
}

// WithClock sets the source of creation timestamps and readiness times.
// A nil function is ignored.
func WithClock(now func() time.Time) Option {
	return func(c *Cluster) {
		if now != nil {
			c.now = now
		}
	}
}

// New builds an empty cluster with its fake nodes registered. Nothing runs
// until Run is called; the API is usable at once.
func New(opts ...Option) *Cluster {
	c := &Cluster{nodes: nodeNames(DefaultNodes), delay: DefaultStartupDelay, now: time.Now}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	cs := fake.NewSimpleClientset()
	t := &apiTracker{ObjectTracker: cs.Tracker(), now: c.now}
	// Prepending puts the metadata-assigning tracker in front of the plain one.
	// Watches keep coming from the shared underlying tracker, so informers see
	// every write made through either.
	cs.PrependReactor("*", "*", k8stesting.ObjectReaction(t))
	c.client = cs
	for _, n := range c.nodes {
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}, Status: v1.NodeStatus{
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		}}
		// Straight into the tracker, so no client action is recorded: tests
		// count the actions of the controller alone. The tracker is empty
		// and the names unique, so this cannot fail.
		_ = t.Create(v1.SchemeGroupVersion.WithResource("nodes"), node, "")
	}
	return c
}

// Client is the cluster's API. It is a *fake.Clientset, so tests can add
// reactors and inspect actions.
func (c *Cluster) Client() *fake.Clientset { return c.client }

// Nodes lists the fake nodes' names.
func (c *Cluster) Nodes() []string { return append([]string(nil), c.nodes...) }

// Run runs the simulated scheduler and kubelet until ctx is done, and returns
// only once every goroutine it started has stopped. A second call returns an
// error instead of starting a second kubelet.
func (c *Cluster) Run(ctx context.Context) error {
	first := false
	c.started.Do(func() { first = true })
	if !first {
		return fmt.Errorf("simulated cluster: Run called twice")
	}
	k := &kubelet{cluster: c, seen: map[string]bool{}}
	factory := informers.NewSharedInformerFactory(c.client, 0)
	podInformer := factory.Core().V1().Pods().Informer()
	if _, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { k.observe(ctx, obj) },
		UpdateFunc: func(_, obj any) { k.observe(ctx, obj) },
	}); err != nil {
		return fmt.Errorf("simulated cluster: %w", err)
	}
	factory.Start(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()
	k.stop()
	return nil
}

// kubelet schedules and starts pods. One goroutine per pending pod is fine at
// demo scale and keeps each pod's delay independent of the others.
type kubelet struct {
	cluster *Cluster

	mu      sync.Mutex
	wg      sync.WaitGroup
	seen    map[string]bool
	stopped bool
	next    int
}

func (k *kubelet) observe(ctx context.Context, obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil {
		return
	}
	if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped || k.seen[string(pod.UID)] {
		return
	}
	k.seen[string(pod.UID)] = true
	node := k.cluster.nodes[k.next%len(k.cluster.nodes)]
	k.next++
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		t := time.NewTimer(k.cluster.delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A pod deleted meanwhile is simply gone; nothing to report.
		_ = k.start(ctx, pod.Namespace, pod.Name, node)
	}()
}

func (k *kubelet) stop() {
	k.mu.Lock()
	k.stopped = true
	k.mu.Unlock()
	k.wg.Wait()
}

// start binds the pod and reports it Running and Ready, retrying on conflicts
// with whatever else (the controller adopting it, a user) wrote meanwhile.
func (k *kubelet) start(ctx context.Context, namespace, name, node string) error {
	pods := k.cluster.client.CoreV1().Pods(namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.DeletionTimestamp != nil {
			return nil
		}
		now := metav1.NewTime(k.cluster.now())
		pod.Spec.NodeName = node
		pod.Status.Phase = v1.PodRunning
		pod.Status.StartTime = &now
		pod.Status.Conditions = []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: now},
			{Type: v1.PodInitialized, Status: v1.ConditionTrue, LastTransitionTime: now},
			{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: now},
			{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: now},
		}
		_, err = pods.Update(ctx, pod, metav1.UpdateOptions{})
		return err
	})
}

func nodeNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("sim-node-%d", i+1)
	}
	return names
}
