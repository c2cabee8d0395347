package simcluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
)

// Defaults for a cluster built without options.
const (
	DefaultNodes        = 3
	DefaultStartupDelay = 300 * time.Millisecond
)

// Cluster is an in-memory cluster: an API (client-go's fake clientset with
// apiserver-like metadata and watches) plus a simulated scheduler and
// kubelet, which run while Run runs.
type Cluster struct {
	client    *fake.Clientset
	tracker   *apiTracker
	nodes     []string
	delay     time.Duration
	clock     clock.Clock
	scheduler bool
	kubelet   bool
	scheme    *runtime.Scheme // nil: client-go's kinds only
	started   sync.Once
}

// Option configures a Cluster.
type Option func(*Cluster)

// WithNodes sets how many fake nodes pods are spread over. Zero or fewer
// means no node at all: the scheduler then leaves every pod Pending and
// unscheduled, as a cluster without capacity would.
func WithNodes(n int) Option {
	return func(c *Cluster) { c.nodes = nodeNames(max(n, 0)) }
}

// WithStartupDelay sets how long a scheduled pod stays Pending before the
// simulated kubelet reports it Running and Ready. Negative values count as
// zero.
func WithStartupDelay(d time.Duration) Option {
	return func(c *Cluster) { c.delay = max(d, 0) }
}

// WithClock sets the clock behind creation timestamps, readiness times and
// the kubelet's startup delay. With a fake clock (k8s.io/utils/clock/testing)
// a test decides when pods become ready by stepping it.
func WithClock(clk clock.Clock) Option {
	return func(c *Cluster) { c.clock = clk }
}

// WithScheduler turns the simulated scheduler on (the default) or off. It
// binds each new pod to a node, round robin. Without it pods stay unbound,
// unless the test binds them.
func WithScheduler(enabled bool) Option {
	return func(c *Cluster) { c.scheduler = enabled }
}

// WithKubelet turns the simulated kubelet on (the default) or off. It marks
// each bound pod Running and Ready after the startup delay. Without it bound
// pods stay Pending, unless the test changes their status.
func WithKubelet(enabled bool) Option {
	return func(c *Cluster) { c.kubelet = enabled }
}

// WithScheme makes the cluster store the kinds of s besides client-go's,
// such as custom resources as typed structs (or as unstructured.Unstructured
// registered under their kind, with an UnstructuredList under the kind plus
// "List"). s must hold client-go's kinds too
// (k8s.io/client-go/kubernetes/scheme.AddToScheme): a nil s or one without
// them panics. Objects of a custom kind are stored under the resource
// meta.UnsafeGuessKindToResource gives (Worker: "workers"), as the client-go
// and controller-runtime fakes name them. The clientset's own Tracker is
// then not the store; Cluster.Tracker is.
func WithScheme(s *runtime.Scheme) Option {
	if s == nil {
		panic("simcluster: WithScheme: nil scheme")
	}
	if !s.Recognizes(v1.SchemeGroupVersion.WithKind("Pod")) || !s.Recognizes(v1.SchemeGroupVersion.WithKind("NodeList")) {
		panic("simcluster: WithScheme: the scheme lacks client-go's kinds; add k8s.io/client-go/kubernetes/scheme.AddToScheme to it")
	}
	return func(c *Cluster) { c.scheme = s }
}

// New builds an empty cluster with its fake nodes registered. Nothing runs
// until Run is called; the API is usable at once.
func New(opts ...Option) *Cluster {
	c := &Cluster{nodes: nodeNames(DefaultNodes), delay: DefaultStartupDelay, clock: clock.RealClock{},
		scheduler: true, kubelet: true}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	cs := fake.NewSimpleClientset()
	store, s := cs.Tracker(), clientgoscheme.Scheme
	if c.scheme != nil {
		// The clientset's own store only knows client-go's kinds; custom
		// resources need a store over the caller's scheme.
		s = c.scheme
		store = k8stesting.NewObjectTracker(s, serializer.NewCodecFactory(s).UniversalDecoder())
	}
	t := newAPITracker(store, s, c.clock.Now)
	// Prepending puts the apiserver-like tracker in front of the plain one,
	// for every verb and for watches, which it serves itself.
	cs.PrependReactor("*", "*", k8stesting.ObjectReaction(t))
	cs.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if wa, ok := action.(k8stesting.WatchActionImpl); ok {
			opts = wa.ListOptions
		}
		w, err := t.Watch(action.GetResource(), action.GetNamespace(), opts)
		return true, w, err
	})
	c.client = cs
	c.tracker = t
	for _, n := range c.nodes {
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}, Status: v1.NodeStatus{
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		}}
		// Straight into the tracker, so no client action is recorded: tests
		// count the actions of the controller alone. The tracker is empty
		// and the names unique, so this cannot fail.
		_ = t.Add(node)
	}
	return c
}

// Tracker is the apiserver-like store behind Client: writes through it get
// generated names, UIDs, resourceVersions and validation, and reach watches
// (held ones included) as Client's do. Give it to another fake client to
// share the cluster, such as controller-runtime's (see ctrlruntime/simkit).
func (c *Cluster) Tracker() k8stesting.ObjectTracker { return c.tracker }

// Client is the cluster's API. It is a *fake.Clientset, so tests can add
// reactors and inspect actions. Its Tracker method returns the plain tracker
// underneath (with WithScheme, a tracker nothing reads: Cluster.Tracker is
// the store); seed objects through Add instead. Writes made straight to the
// plain tracker are not validated; they do reach watches, relayed one at a time and given a
// resourceVersion as they are relayed; an update through the client that
// read the object before such a write conflicts with it, as on a real
// apiserver. A raw write to an object whose previous raw write is still
// being relayed can be lost: wait for each one's watch event before the
// next.
func (c *Cluster) Client() *fake.Clientset { return c.client }

// Add stores objects as they are (seeding a test), filling in a UID and a
// creation timestamp where missing and a fresh resourceVersion, without
// recording a client action. Open watches see them added.
func (c *Cluster) Add(objs ...runtime.Object) error {
	for _, obj := range objs {
		if err := c.tracker.Add(obj); err != nil {
			return err
		}
	}
	return nil
}

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
	k := &kubelet{cluster: c, scheduled: map[types.UID]bool{}, started: map[types.UID]bool{}}
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

// kubelet schedules and starts pods. Scheduling is immediate; each start
// waits for the startup delay in its own goroutine, which is fine at test
// scale and keeps each pod's delay independent of the others.
type kubelet struct {
	cluster *Cluster

	mu        sync.Mutex
	wg        sync.WaitGroup
	scheduled map[types.UID]bool
	started   map[types.UID]bool
	stopped   bool
	next      int
}

func (k *kubelet) observe(ctx context.Context, obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod.DeletionTimestamp != nil || pod.Status.Phase != v1.PodPending && pod.Status.Phase != "" {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return
	}
	switch {
	case pod.Spec.NodeName == "" && k.cluster.scheduler && len(k.cluster.nodes) > 0 && !k.scheduled[pod.UID]:
		k.scheduled[pod.UID] = true
		node := k.cluster.nodes[k.next%len(k.cluster.nodes)]
		k.next++
		k.spawn(func() { _ = k.bind(ctx, pod.Namespace, pod.Name, node) })
	case pod.Spec.NodeName != "" && k.cluster.kubelet && !k.started[pod.UID]:
		k.started[pod.UID] = true
		k.spawn(func() {
			t := k.cluster.clock.NewTimer(k.cluster.delay)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return
			case <-t.C():
			}
			_ = k.start(ctx, pod.Namespace, pod.Name)
		})
	}
}

// spawn runs fn in a goroutine that stop waits for. k.mu must be held.
func (k *kubelet) spawn(fn func()) {
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		fn()
	}()
}

func (k *kubelet) stop() {
	k.mu.Lock()
	k.stopped = true
	k.mu.Unlock()
	k.wg.Wait()
}

// bind assigns the pod to node, as the scheduler's binding does. A pod
// deleted or bound meanwhile is left alone.
func (k *kubelet) bind(ctx context.Context, namespace, name, node string) error {
	return k.updatePod(ctx, namespace, name, func(pod *v1.Pod, now metav1.Time) bool {
		if pod.Spec.NodeName != "" {
			return false
		}
		pod.Spec.NodeName = node
		pod.Status.Phase = v1.PodPending
		pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: now}}
		return true
	})
}

// start reports the pod Running and Ready, as the kubelet would once its
// containers run and pass their readiness probes.
func (k *kubelet) start(ctx context.Context, namespace, name string) error {
	return k.updatePod(ctx, namespace, name, func(pod *v1.Pod, now metav1.Time) bool {
		if pod.Status.Phase != v1.PodPending && pod.Status.Phase != "" {
			return false
		}
		pod.Status.Phase = v1.PodRunning
		pod.Status.StartTime = &now
		pod.Status.Conditions = []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: now},
			{Type: v1.PodInitialized, Status: v1.ConditionTrue, LastTransitionTime: now},
			{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: now},
			{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: now},
		}
		return true
	})
}

// updatePod applies change to the live pod, retrying on conflicts with
// whatever else (the controller adopting it, a user) wrote meanwhile. A pod
// deleted meanwhile is simply gone; nothing to report.
func (k *kubelet) updatePod(ctx context.Context, namespace, name string, change func(*v1.Pod, metav1.Time) bool) error {
	pods := k.cluster.client.CoreV1().Pods(namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.DeletionTimestamp != nil || !change(pod, metav1.NewTime(k.cluster.clock.Now())) {
			return nil
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
