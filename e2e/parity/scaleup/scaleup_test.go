package scaleup

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/klog/v2"
	uprs "k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/e2e/kubetest"
	ckrs "github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/internal/benchpair"
	"github.com/ctrlkit/ctrlkit/podset"
)

const (
	// Both controllers get the same client rate limit. It is kubetest's
	// default, high enough that the controllers and the apiserver, not the
	// client-side limiter, decide the time.
	clientQPS   = 1000
	clientBurst = 2000
	// burstReplicas is upstream's default (and kube-controller-manager's).
	burstReplicas = 500
	// workers is kube-controller-manager's default --concurrent-replicaset-syncs.
	workers = 5
	// scaleTimeout bounds one scale-up; the loaded CI machine needs minutes
	// for 5,000 pods.
	scaleTimeout = 10 * time.Minute
)

var (
	warmOnce sync.Once
	envOnce  sync.Once
	env      *kubetest.Env
	envErr   error
)

func TestMain(m *testing.M) {
	// Both controllers log through klog; their progress lines (and
	// upstream's read-your-writes retries) would bury the benchmark output.
	klog.SetLogger(logr.Discard())
	if impl := os.Getenv(heapChildEnv); impl != "" {
		os.Exit(heapChild(impl))
	}
	code := m.Run()
	if env != nil {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "scaleup: stopping the control plane:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func controlPlane(b *testing.B) *kubetest.Env {
	envOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
		defer cancel()
		env, envErr = kubetest.Start(ctx)
	})
	if envErr != nil {
		b.Fatalf("starting kube-apiserver and etcd: %v", envErr)
	}
	return env
}

// writeCounter counts the writes a controller sends, by kind.
type writeCounter struct {
	next    http.RoundTripper
	creates atomic.Int64 // successful pod POSTs
	writes  atomic.Int64 // every non-GET request
	mu      sync.Mutex
	byKind  map[string]int
}

func (w *writeCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(req)
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		return resp, err
	}
	w.writes.Add(1)
	kind := req.Method + " " + resource(req.URL.Path)
	w.mu.Lock()
	w.byKind[kind]++
	w.mu.Unlock()
	if err == nil && req.Method == http.MethodPost && resource(req.URL.Path) == "pods" && resp.StatusCode < 300 {
		w.creates.Add(1)
	}
	return resp, err
}

// resource names the kind a request path addresses, with a /status suffix
// for the status subresource: /api/v1/namespaces/ns/pods -> pods.
func resource(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range parts {
		if p == "namespaces" && i+2 < len(parts) {
			rest := parts[i+2:]
			if len(rest) >= 3 {
				return rest[0] + "/" + rest[2]
			}
			return rest[0]
		}
	}
	if len(parts) > 0 {
		return parts[len(parts)-1]
	}
	return path
}

// shape is a scale-up: owners ReplicaSets of pods replicas each, from zero.
type shape struct{ owners, pods int }

func (s shape) String() string { return fmt.Sprintf("%dx%d", s.owners, s.pods) }
func (s shape) total() int     { return s.owners * s.pods }

var shapes = []shape{{owners: 1, pods: 1000}, {owners: 500, pods: 10}}

type result struct {
	created, observed time.Duration // from the first ReplicaSet create
	creates, writes   int64
	byKind            map[string]int
	cpu               time.Duration // user+system CPU of this process
	allocBytes        uint64        // heap bytes allocated by this process
}

// processCPU is the user plus system CPU time of this process. The apiserver
// and etcd are child processes: RUSAGE_SELF does not include them.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// allocatedBytes is the cumulative count of heap bytes allocated.
func allocatedBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// newController builds one side with the read-your-writes guard on or off:
// upstream through its feature gate (read when the controller is built),
// ctrlkit through the same gate name in WithFeatureGates.
func newController(b *testing.B, ctx context.Context, impl string, guard bool, client kubernetes.Interface, factory informers.SharedInformerFactory) func(context.Context) {
	podInf, rsInf := factory.Core().V1().Pods(), factory.Apps().V1().ReplicaSets()
	switch impl {
	case "ctrlkit":
		gates := func(f string) bool {
			if f == podset.StaleControllerConsistencyReplicaSet {
				return guard
			}
			return podset.DefaultFeatureGates(f)
		}
		c, err := ckrs.NewReplicaSetController(ctx, client, podInf, rsInf,
			podset.WithBurstReplicas(burstReplicas), podset.WithWorkers(workers), podset.WithFeatureGates(gates))
		if err != nil {
			b.Fatal(err)
		}
		return func(ctx context.Context) {
			if err := c.Run(ctx); err != nil && ctx.Err() == nil {
				b.Error(err)
			}
		}
	case "upstream":
		featuregatetesting.SetFeatureGateDuringTest(b, utilfeature.DefaultFeatureGate, features.StaleControllerConsistencyReplicaSet, guard)
		c := uprs.NewReplicaSetController(ctx, rsInf, podInf, client, burstReplicas)
		return func(ctx context.Context) { c.Run(ctx, workers) }
	}
	b.Fatalf("unknown impl %q", impl)
	return nil
}

func replicaSet(ns, name string, replicas int) *appsv1.ReplicaSet {
	labels := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
}

// createAll creates the objects with a few concurrent requests, as a user's
// apply of many objects would.
func createAll(ctx context.Context, n int, create func(ctx context.Context, i int) error) error {
	const parallel = 16
	next := atomic.Int64{}
	errs := make(chan error, parallel)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := create(ctx, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// scaleOnce runs one controller in a fresh namespace, creates the shape's
// ReplicaSets and measures until all pods exist and until every ReplicaSet's
// status counts them.
func scaleOnce(b *testing.B, e *kubetest.Env, impl string, guard bool, sh shape, ns string) result {
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
	defer cancel()

	admin, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}

	counter := &writeCounter{byKind: map[string]int{}}
	cfg, closeIdle, err := e.ClientConfig(func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter })
	if err != nil {
		b.Fatal(err)
	}
	defer closeIdle()
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}

	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	run := newController(b, ctx, impl, guard, client, factory)

	// An independent watch, on the uncounted admin client, sees the pods and
	// the statuses. It runs in this process for both sides alike.
	watchFactory := informers.NewSharedInformerFactoryWithOptions(admin, 0, informers.WithNamespace(ns))
	var seen atomic.Int64
	allThere, allObserved := make(chan struct{}), make(chan struct{})
	var createdOnce, observedOnce sync.Once
	_, err = watchFactory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) {
			if seen.Add(1) == int64(sh.total()) {
				createdOnce.Do(func() { close(allThere) })
			}
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	done := map[string]bool{}
	observe := func(obj any) {
		rs, ok := obj.(*appsv1.ReplicaSet)
		if !ok || rs.Status.Replicas != int32(sh.pods) || rs.Status.ObservedGeneration < rs.Generation {
			return
		}
		mu.Lock()
		done[rs.Name] = true
		n := len(done)
		mu.Unlock()
		if n == sh.owners {
			observedOnce.Do(func() { close(allObserved) })
		}
	}
	_, err = watchFactory.Apps().V1().ReplicaSets().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, cur any) { observe(cur) },
	})
	if err != nil {
		b.Fatal(err)
	}

	factory.Start(ctx.Done())
	watchFactory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	watchFactory.WaitForCacheSync(ctx.Done())
	var wg sync.WaitGroup
	wg.Go(func() { run(ctx) })
	defer func() {
		cancel()
		wg.Wait()
		factory.Shutdown()
		watchFactory.Shutdown()
		// No namespace controller runs here, so clear the pods by hand to
		// keep etcd small for the next run.
		cleanup, cancelCleanup := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancelCleanup()
		_ = admin.AppsV1().ReplicaSets(ns).DeleteCollection(cleanup, metav1.DeleteOptions{}, metav1.ListOptions{})
		_ = admin.CoreV1().Pods(ns).DeleteCollection(cleanup, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{})
	}()

	runtime.GC()
	cpu0, alloc0 := processCPU(b), allocatedBytes()
	start := time.Now()
	err = createAll(ctx, sh.owners, func(ctx context.Context, i int) error {
		_, err := admin.AppsV1().ReplicaSets(ns).Create(ctx, replicaSet(ns, fmt.Sprintf("scale-%d", i), sh.pods), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	timeout := time.After(scaleTimeout)
	var res result
	select {
	case <-allThere:
		res.created = time.Since(start)
	case <-timeout:
		b.Fatalf("%s: only %d of %d pods after %v", impl, seen.Load(), sh.total(), scaleTimeout)
	}
	select {
	case <-allObserved:
		res.observed = time.Since(start)
	case <-timeout:
		mu.Lock()
		n := len(done)
		mu.Unlock()
		b.Fatalf("%s: only %d of %d ReplicaSets with status.replicas=%d after %v", impl, n, sh.owners, sh.pods, scaleTimeout)
	}
	res.cpu, res.allocBytes = processCPU(b)-cpu0, allocatedBytes()-alloc0

	// Let the controller settle, so that an extra create would show in the
	// count.
	time.Sleep(2 * time.Second)
	counter.mu.Lock()
	res.byKind = map[string]int{}
	for k, v := range counter.byKind {
		res.byKind[k] = v
	}
	counter.mu.Unlock()
	res.creates, res.writes = counter.creates.Load(), counter.writes.Load()
	return res
}

// BenchmarkScaleUp scales ReplicaSets from zero with each controller, with
// the read-your-writes guard on for both and off for both. Each op is one
// full scale-up in a fresh namespace; run it with -benchtime 1x and -count
// for rounds. Which controller runs first alternates from round to round.
// See BENCHMARKS.md for the metrics.
func BenchmarkScaleUp(b *testing.B) {
	e := controlPlane(b)
	round := benchpair.Round(b)
	// The first scale-ups after start meet a cold apiserver and etcd and a
	// test process whose heap has yet to grow: with a warm-up of 100 pods,
	// whichever side ran first in a round was still 0.4-0.6 s slower at
	// 1,000 pods. One untimed scale-up of the first measured size per
	// side, once per process, takes that cost out of both.
	warmOnce.Do(func() {
		for _, impl := range []string{"ctrlkit", "upstream"} {
			res := scaleOnce(b, e, impl, true, shapes[0], fmt.Sprintf("warmup-%s-%d", impl, time.Now().UnixNano()))
			b.Logf("warm-up %s: %v", impl, res.created.Round(time.Millisecond))
		}
	})
	impls := benchpair.Order(b, "ctrlkit", "upstream")
	for _, sh := range shapes {
		for _, guard := range []bool{true, false} {
			guardName := map[bool]string{true: "on", false: "off"}[guard]
			for _, impl := range impls {
				b.Run(fmt.Sprintf("shape=%s/guard=%s/impl=%s", sh, guardName, impl), func(b *testing.B) {
					var sum result
					for i := range b.N {
						res := scaleOnce(b, e, impl, guard, sh, fmt.Sprintf("scaleup-%s-%d-%d", impl, i, time.Now().UnixNano()))
						if res.creates != int64(sh.total()) {
							b.Errorf("%s made %d pod creates, want exactly %d (%v)", impl, res.creates, sh.total(), res.byKind)
						}
						sum.created += res.created
						sum.observed += res.observed
						sum.creates += res.creates
						sum.writes += res.writes
						sum.cpu += res.cpu
						sum.allocBytes += res.allocBytes
						b.Logf("round %d %s guard=%s: created %v, status %v, cpu %v, writes by kind: %v", round, impl, guardName,
							res.created.Round(time.Millisecond), res.observed.Round(time.Millisecond), res.cpu.Round(time.Millisecond), res.byKind)
					}
					n := float64(b.N)
					kpods := n * float64(sh.total()) / 1000
					// ns/op is the time to status-observed, not the whole op
					// with its namespace setup and cleanup.
					b.ReportMetric(float64(sum.observed.Nanoseconds())/n, "ns/op")
					b.ReportMetric(sum.created.Seconds()/n, "s-created")
					b.ReportMetric(sum.observed.Seconds()/n, "s-status")
					b.ReportMetric(float64(sum.creates)/n, "creates/op")
					b.ReportMetric(float64(sum.writes)/n, "writes/op")
					b.ReportMetric(float64(sum.cpu.Milliseconds())/kpods, "cpu-ms/1kpods")
					b.ReportMetric(float64(sum.allocBytes)/kpods/(1<<20), "alloc-MiB/1kpods")
				})
			}
		}
	}
}

func TestResource(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/namespaces/ns/pods":                        "pods",
		"/api/v1/namespaces/ns/pods/p1":                     "pods",
		"/apis/apps/v1/namespaces/ns/replicasets/rs/status": "replicasets/status",
		"/api/v1/namespaces/ns/events":                      "events",
		"/api/v1/namespaces":                                "namespaces",
	} {
		if got := resource(path); got != want {
			t.Errorf("resource(%q) = %q, want %q", path, got, want)
		}
	}
}
