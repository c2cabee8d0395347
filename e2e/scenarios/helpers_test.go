package scenarios

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	watchtools "k8s.io/client-go/tools/watch"
	clientworkqueue "k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/e2e/kubetest"
	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/podset"
)

// scenario is one test's slice of the shared control plane: a namespace, a
// client for the test's own requests, and a separately counted client for the
// controller's.
type scenario struct {
	t      *testing.T
	ctx    context.Context
	ns     string
	client kubernetes.Interface // the test's own requests

	env *kubetest.Env

	ctrlClient kubernetes.Interface // the controller's requests, counted
	ctrlConfig *rest.Config         // what ctrlClient was built from
	creates    *callCounter
	// audit records the controller's writes and every request the apiserver
	// refused as forbidden; any refusal fails the test.
	audit   *requestAudit
	closers *[]func() // idle-connection closers run before the goroutine check

	// overCreation fails the test if an owner ever has more pods than its
	// replicas; a scenario that expects an excess documents it with allow.
	overCreation *overCreationSampler
}

// scenarioOption changes how newScenario sets a scenario up.
type scenarioOption func(*scenarioConfig)

type scenarioConfig struct {
	env    *kubetest.Env
	ownEnv bool
	// identity, when set, is the service account the controller's client
	// impersonates instead of acting as an admin.
	identity *serviceAccount
	// wraps are applied to the controller's transport, innermost first.
	wraps []func(http.RoundTripper) http.RoundTripper
}

type serviceAccount struct{ namespace, name string }

// onOwnEnv runs the scenario on a control plane of its own instead of the
// shared one, and stops it before the goroutine check: a fault such as a
// restart starts server-watching goroutines in the harness during the test.
func onOwnEnv(e *kubetest.Env) scenarioOption {
	return func(c *scenarioConfig) { c.env, c.ownEnv = e, true }
}

// asServiceAccount runs the controller's client as the service account.
func asServiceAccount(namespace, name string) scenarioOption {
	return func(c *scenarioConfig) { c.identity = &serviceAccount{namespace: namespace, name: name} }
}

// wrapController adds a transport wrapper (a fault, a recorder) to the
// controller's client.
func wrapController(w func(http.RoundTripper) http.RoundTripper) scenarioOption {
	return func(c *scenarioConfig) { c.wraps = append(c.wraps, w) }
}

// newScenario gives t a fresh namespace and clients. Cleanups run in reverse,
// so the goroutine check registered first runs after the controller, the
// watches and the transports have been shut down.
func newScenario(t *testing.T, timeout time.Duration, opts ...scenarioOption) *scenario {
	t.Helper()
	var sc scenarioConfig
	for _, o := range opts {
		o(&sc)
	}
	if sc.env == nil {
		sc.env = sharedEnv(t)
	}
	ignore := goleak.IgnoreCurrent()
	var closers []func()
	t.Cleanup(func() {
		if sc.ownEnv {
			if err := sc.env.Stop(); err != nil {
				t.Errorf("stop the scenario's control plane: %v", err)
			}
		}
		// An HTTP/2 connection whose last stream (an event write, a watch)
		// is still winding down is not idle yet; close again until the
		// connections are gone or the grace period ends, then check.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			for _, c := range closers {
				c()
			}
			if goleak.Find(ignore) == nil {
				break
			}
		}
		goleak.VerifyNone(t, ignore)
	})

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)

	cfg, closeIdle, err := sc.env.ClientConfig(nil)
	require.NoError(t, err)
	closers = append(closers, closeIdle)
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)

	creates := &callCounter{}
	audit := &requestAudit{}
	ctrlCfg, closeCtrlIdle, err := sc.env.ClientConfig(func(rt http.RoundTripper) http.RoundTripper {
		for _, w := range sc.wraps {
			rt = w(rt)
		}
		return creates.wrap(audit.wrap(rt))
	})
	require.NoError(t, err)
	closers = append(closers, closeCtrlIdle)
	if sc.identity != nil {
		ctrlCfg = kubetest.ImpersonationConfig(ctrlCfg, sc.identity.namespace, sc.identity.name)
	}
	ctrlClient, err := kubernetes.NewForConfig(ctrlCfg)
	require.NoError(t, err)

	ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: namespacePrefix(t.Name())},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	s := &scenario{t: t, ctx: ctx, env: sc.env, ns: ns.Name, client: client, ctrlClient: ctrlClient, ctrlConfig: ctrlCfg,
		creates: creates, audit: audit, closers: &closers}
	// Cleanups run in reverse: these checks run after every controller
	// started later has stopped, and before the goroutine check.
	s.overCreation = newOverCreationSampler(t, client, ns.Name)
	t.Cleanup(func() { audit.check(t) })
	return s
}

// clientConfig is a config for the scenario's control plane with a transport
// of its own (wrapped by wrap, if not nil). Its idle connections are closed
// by the scenario's cleanup, again and again until they are gone, before
// the goroutine check: one close at cleanup can come while a connection's
// last stream is still winding down, and leave its read loop running.
func (s *scenario) clientConfig(wrap func(http.RoundTripper) http.RoundTripper) *rest.Config {
	s.t.Helper()
	cfg, closeIdle, err := s.env.ClientConfig(wrap)
	require.NoError(s.t, err)
	*s.closers = append(*s.closers, closeIdle)
	return cfg
}

var nonDNS = regexp.MustCompile(`[^a-z0-9]+`)

func namespacePrefix(testName string) string {
	s := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(testName), "-"), "-")
	if len(s) > 40 {
		s = s[:40]
	}
	return s + "-"
}

// controllerKind selects which constructor of the example controller runs.
type controllerKind int

const (
	kindReplicaSet controllerKind = iota
	kindReplicationController
)

// runController starts the example controller with its own informer factory
// scoped to the scenario's namespace, and returns a function that stops it and
// waits until Run has returned and every informer goroutine has exited. The
// stop function is also registered as a cleanup; calling it twice is fine.
func (s *scenario) runController(kind controllerKind, opts ...replicaset.Option) (stop func()) {
	s.t.Helper()
	ctx, cancel := context.WithCancel(s.ctx)
	done := s.startController(ctx, s.ctrlClient, kind, opts...)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	s.t.Cleanup(stop)
	return stop
}

// startController runs the example controller with client until ctx ends,
// and closes the returned channel once Run has returned and the informers and
// event broadcaster have stopped. A Run error other than cancellation fails
// the test.
func (s *scenario) startController(ctx context.Context, client kubernetes.Interface, kind controllerKind, opts ...replicaset.Option) <-chan struct{} {
	s.t.Helper()
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "ctrlkit-e2e"})
	opts = append([]replicaset.Option{podset.WithEventRecorder(recorder)}, opts...)

	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(s.ns))
	var (
		c   *replicaset.Controller
		err error
	)
	switch kind {
	case kindReplicationController:
		c, err = replicaset.NewReplicationManager(ctx, client, factory.Core().V1().Pods(), factory.Core().V1().ReplicationControllers(), opts...)
	default:
		c, err = replicaset.NewReplicaSetController(ctx, client, factory.Core().V1().Pods(), factory.Apps().V1().ReplicaSets(), opts...)
	}
	done := make(chan struct{})
	if err != nil {
		// Errorf, not Fatalf: leader-elected instances start controllers
		// from their own goroutines.
		broadcaster.Shutdown()
		s.t.Errorf("construct controller: %v", err)
		close(done)
		return done
	}
	factory.Start(ctx.Done())
	go func() {
		defer close(done)
		if err := c.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			s.t.Errorf("controller Run: %v", err)
		}
		factory.Shutdown()
		broadcaster.Shutdown()
	}()
	return done
}

// eventually polls cond every 100 ms until it returns true, failing the test
// with cond's last explanation if timeout passes first.
func (s *scenario) eventually(timeout time.Duration, what string, cond func() (bool, string)) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for {
		var ok bool
		ok, last = cond()
		if ok {
			return
		}
		if refused := s.audit.refusals(); len(refused) > 0 {
			// No point waiting: the controller cannot do what it needs.
			s.t.Fatalf("waiting for %s: the controller was refused: %s", what, strings.Join(refused, "; "))
		}
		if time.Now().After(deadline) || s.ctx.Err() != nil {
			s.t.Fatalf("timed out after %s waiting for %s; last state: %s", timeout, what, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitRS waits until the ReplicaSet's status satisfies cond for the current
// generation, and returns it.
func (s *scenario) waitRS(name string, timeout time.Duration, what string, cond func(*appsv1.ReplicaSet) bool) *appsv1.ReplicaSet {
	s.t.Helper()
	var rs *appsv1.ReplicaSet
	s.eventually(timeout, what, func() (bool, string) {
		var err error
		rs, err = s.client.AppsV1().ReplicaSets(s.ns).Get(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return rs.Status.ObservedGeneration >= rs.Generation && cond(rs), fmt.Sprintf("generation %d, status %+v", rs.Generation, rs.Status)
	})
	return rs
}

func (s *scenario) createRS(name string, replicas int32, labels map[string]string, mutate ...func(*appsv1.ReplicaSet)) *appsv1.ReplicaSet {
	s.t.Helper()
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: podTemplate(labels),
		},
	}
	for _, m := range mutate {
		m(rs)
	}
	created, err := s.client.AppsV1().ReplicaSets(s.ns).Create(s.ctx, rs, metav1.CreateOptions{})
	require.NoError(s.t, err)
	return created
}

func (s *scenario) scaleRS(name string, replicas int32) {
	s.t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	_, err := s.client.AppsV1().ReplicaSets(s.ns).Patch(s.ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	require.NoError(s.t, err)
}

func podTemplate(labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
			// Deleting a bound pod otherwise waits for a kubelet that does not
			// exist; the recorder counts a pod as deleted either way.
			TerminationGracePeriodSeconds: ptr.To[int64](0),
		},
	}
}

// listPods returns the namespace's pods matching the label selector.
func (s *scenario) listPods(selector string) []corev1.Pod {
	s.t.Helper()
	list, err := s.client.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: selector})
	require.NoError(s.t, err)
	return list.Items
}

func activePods(pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

func ownedBy(pods []corev1.Pod, uid types.UID) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == uid {
			out = append(out, p)
		}
	}
	return out
}

// podState is what the test, standing in for scheduler and kubelet, makes of
// a pod.
type podState struct {
	bind  bool // bind to the fake node "node-1"
	ready *bool
	// readySince is the Ready condition's lastTransitionTime; zero means now.
	readySince time.Time
}

// setPods applies state to every pod with a pool of workers: binding through
// the pods/binding subresource as the scheduler would, then writing the
// status subresource as a kubelet would.
func (s *scenario) setPods(pods []corev1.Pod, state podState) {
	s.t.Helper()
	since := state.readySince
	if since.IsZero() {
		since = time.Now()
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  atomic.Int64
	)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(pods) {
					return
				}
				if err := s.setPod(&pods[i], state, since); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(s.t, first)
}

func (s *scenario) setPod(pod *corev1.Pod, state podState, since time.Time) error {
	pods := s.client.CoreV1().Pods(s.ns)
	if state.bind && pod.Spec.NodeName == "" {
		err := pods.Bind(s.ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, UID: pod.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: "node-1"},
		}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("bind %s: %w", pod.Name, err)
		}
	}
	if state.ready == nil {
		return nil
	}
	status := corev1.ConditionFalse
	if *state.ready {
		status = corev1.ConditionTrue
	}
	patch := fmt.Sprintf(`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":%q,"lastTransitionTime":%q}]}}`,
		status, since.UTC().Format(time.RFC3339))
	if _, err := pods.Patch(s.ctx, pod.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("set status of %s: %w", pod.Name, err)
	}
	return nil
}

// podRecorder follows a watch on the scenario's pods and keeps the history the
// assertions need: every pod ever created, every pod ever deleted (or marked
// for deletion), and the largest number of live pods at any moment.
type podRecorder struct {
	mu        sync.Mutex
	active    map[string]bool
	created   map[string]bool
	deleted   map[string]bool
	maxActive int
	adopted   map[string]metav1.OwnerReference // first controllerRef seen on each pod
	stop      func()
}

// recordPods starts recording pods matching selector from the namespace's
// current state onward. Pods that exist already count as live but not as
// created.
func (s *scenario) recordPods(selector string) *podRecorder {
	s.t.Helper()
	list, err := s.client.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: selector})
	require.NoError(s.t, err)
	r := &podRecorder{active: map[string]bool{}, created: map[string]bool{}, deleted: map[string]bool{}, adopted: map[string]metav1.OwnerReference{}}
	for i := range list.Items {
		r.observe(watch.Modified, &list.Items[i])
	}
	// The apiserver closes watchers that fall behind (a burst of 1000 pods
	// does that), so the watch resumes from the last resourceVersion seen:
	// a gap would make the counts below wrong.
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.LabelSelector = selector
		return s.client.CoreV1().Pods(s.ns).Watch(ctx, o)
	}}
	w, err := watchtools.NewRetryWatcherWithContext(s.ctx, list.ResourceVersion, lw)
	require.NoError(s.t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok {
				r.observe(ev.Type, pod)
			} else if ev.Type == watch.Error && s.ctx.Err() == nil {
				s.t.Errorf("pod watch failed: %v", ev.Object)
			}
		}
	}()
	var once sync.Once
	r.stop = func() { once.Do(func() { w.Stop(); <-w.Done(); <-done }) }
	s.t.Cleanup(r.stop)
	return r
}

func (r *podRecorder) observe(t watch.EventType, pod *corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t == watch.Added {
		r.created[pod.Name] = true
	}
	if ref := metav1.GetControllerOf(pod); ref != nil {
		if _, seen := r.adopted[pod.Name]; !seen {
			r.adopted[pod.Name] = *ref
		}
	}
	if t == watch.Deleted || pod.DeletionTimestamp != nil {
		r.deleted[pod.Name] = true
		delete(r.active, pod.Name)
	} else {
		r.active[pod.Name] = true
	}
	r.maxActive = max(r.maxActive, len(r.active))
}

type podHistory struct {
	Created, Deleted, Active, MaxActive int
	DeletedNames                        map[string]bool
	FirstOwner                          map[string]metav1.OwnerReference
}

func (r *podRecorder) snapshot() podHistory {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := podHistory{Created: len(r.created), Deleted: len(r.deleted), Active: len(r.active), MaxActive: r.maxActive,
		DeletedNames: map[string]bool{}, FirstOwner: map[string]metav1.OwnerReference{}}
	for n := range r.deleted {
		h.DeletedNames[n] = true
	}
	for n, ref := range r.adopted {
		h.FirstOwner[n] = ref
	}
	return h
}

// settle waits until the recorder has seen no pod event for quiet, so that a
// late over-creation or extra deletion would be caught by the assertions that
// follow.
func (s *scenario) settle(r *podRecorder, quiet time.Duration) podHistory {
	s.t.Helper()
	last := r.snapshot()
	lastChange := time.Now()
	for time.Since(lastChange) < quiet {
		time.Sleep(100 * time.Millisecond)
		cur := r.snapshot()
		if cur.Created != last.Created || cur.Deleted != last.Deleted || cur.Active != last.Active {
			last, lastChange = cur, time.Now()
		}
		if s.ctx.Err() != nil {
			break
		}
	}
	return last
}

// callCounter counts the controller's pod create calls and how many ran at
// once, which is what slow-start batching bounds.
type callCounter struct {
	calls, failed    atomic.Int64
	inFlight, maxFly atomic.Int64
	// unknown counts creates whose outcome the controller could not know:
	// no response at all, or a gateway timeout. Each may have created a pod
	// the controller believes it did not.
	unknown atomic.Int64

	mu sync.Mutex
	// okAt holds when each write of the controller to a pod or an owner
	// (any method but GET; events do not count, since the broadcaster
	// retries them on its own) was answered with success, in order, so a
	// fault scenario can tell when the controller resumed syncing after the
	// fault cleared.
	okAt []time.Time
}

// firstWriteAfter returns when the first successful write of the
// controller answered after t.
func (c *callCounter) firstWriteAfter(t time.Time) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, at := range c.okAt {
		if at.After(t) {
			return at, true
		}
	}
	return time.Time{}, false
}

func (c *callCounter) recordWrite(req *http.Request, resp *http.Response, err error) {
	if req.Method == http.MethodGet || err != nil || resp.StatusCode >= 300 || strings.Contains(req.URL.Path, "/events") {
		return
	}
	now := time.Now()
	c.mu.Lock()
	c.okAt = append(c.okAt, now)
	c.mu.Unlock()
}

func (c *callCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/pods") {
			resp, err := rt.RoundTrip(req)
			c.recordWrite(req, resp, err)
			return resp, err
		}
		c.calls.Add(1)
		n := c.inFlight.Add(1)
		for {
			m := c.maxFly.Load()
			if n <= m || c.maxFly.CompareAndSwap(m, n) {
				break
			}
		}
		resp, err := rt.RoundTrip(req)
		c.inFlight.Add(-1)
		c.recordWrite(req, resp, err)
		if err != nil || resp.StatusCode >= 300 {
			c.failed.Add(1)
		}
		if err != nil || resp.StatusCode == http.StatusGatewayTimeout {
			c.unknown.Add(1)
		}
		return resp, err
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// syncCounter is a workqueue metrics provider that counts finished syncs:
// the work-duration histogram is observed once per processed key.
type syncCounter struct{ syncs atomic.Int64 }

func (c *syncCounter) NewDepthMetric(string) clientworkqueue.GaugeMetric       { return noopMetric{} }
func (c *syncCounter) NewAddsMetric(string) clientworkqueue.CounterMetric      { return noopMetric{} }
func (c *syncCounter) NewLatencyMetric(string) clientworkqueue.HistogramMetric { return noopMetric{} }
func (c *syncCounter) NewWorkDurationMetric(string) clientworkqueue.HistogramMetric {
	return observeFunc(func(float64) { c.syncs.Add(1) })
}
func (c *syncCounter) NewUnfinishedWorkSecondsMetric(string) clientworkqueue.SettableGaugeMetric {
	return noopMetric{}
}
func (c *syncCounter) NewLongestRunningProcessorSecondsMetric(string) clientworkqueue.SettableGaugeMetric {
	return noopMetric{}
}
func (c *syncCounter) NewRetriesMetric(string) clientworkqueue.CounterMetric { return noopMetric{} }

type noopMetric struct{}

func (noopMetric) Inc()            {}
func (noopMetric) Dec()            {}
func (noopMetric) Set(float64)     {}
func (noopMetric) Observe(float64) {}

type observeFunc func(float64)

func (f observeFunc) Observe(v float64) { f(v) }

func condition(conds []appsv1.ReplicaSetCondition, t appsv1.ReplicaSetConditionType) *appsv1.ReplicaSetCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
