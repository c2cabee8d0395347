package scaleup

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctrlkit/ctrlkit/e2e/kubetest"
	ckrs "github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	uprs "k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/utils/ptr"
)

const (
	replicas = 1000
	// Both controllers get the same client rate limit. It is kubetest's
	// default, high enough that the controllers and the apiserver, not the
	// client-side limiter, decide the time.
	clientQPS   = 1000
	clientBurst = 2000
	// burstReplicas is upstream's default (and kube-controller-manager's).
	burstReplicas = 500
	// workers is kube-controller-manager's default --concurrent-replicaset-syncs.
	workers = 5
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

type result struct {
	elapsed         time.Duration
	creates, writes int64
	byKind          map[string]int
}

// scaleOnce runs one controller in a fresh namespace, creates a ReplicaSet
// of 1,000 replicas and measures until all pods exist.
func scaleOnce(b *testing.B, e *kubetest.Env, impl, ns string) result {
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background().V(1)))
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
	podInf, rsInf := factory.Core().V1().Pods(), factory.Apps().V1().ReplicaSets()
	var run func(context.Context)
	switch impl {
	case "ctrlkit":
		c, err := ckrs.NewReplicaSetController(ctx, client, podInf, rsInf, ckrs.WithBurstReplicas(burstReplicas), ckrs.WithWorkers(workers))
		if err != nil {
			b.Fatal(err)
		}
		run = func(ctx context.Context) {
			if err := c.Run(ctx); err != nil && ctx.Err() == nil {
				b.Error(err)
			}
		}
	case "upstream":
		c := uprs.NewReplicaSetController(ctx, rsInf, podInf, client, burstReplicas)
		run = func(ctx context.Context) { c.Run(ctx, workers) }
	}

	// An independent watch, on the uncounted admin client, sees the pods.
	watchFactory := informers.NewSharedInformerFactoryWithOptions(admin, 0, informers.WithNamespace(ns))
	var seen atomic.Int64
	allThere := make(chan struct{})
	var once sync.Once
	_, err = watchFactory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) {
			if seen.Add(1) == replicas {
				once.Do(func() { close(allThere) })
			}
		},
	})
	if err != nil {
		b.Fatal(err)
	}

	factory.Start(ctx.Done())
	watchFactory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	watchFactory.WaitForCacheSync(ctx.Done())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); run(ctx) }()
	defer func() {
		cancel()
		wg.Wait()
		factory.Shutdown()
		watchFactory.Shutdown()
		// No namespace controller runs here, so clear the pods by hand to
		// keep etcd small for the next run.
		cleanup, cancelCleanup := context.WithTimeout(context.Background(), time.Minute)
		defer cancelCleanup()
		_ = admin.CoreV1().Pods(ns).DeleteCollection(cleanup, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{})
		_ = admin.AppsV1().ReplicaSets(ns).DeleteCollection(cleanup, metav1.DeleteOptions{}, metav1.ListOptions{})
	}()

	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "scale", Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "scale"}},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "scale"}},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
	b.StartTimer()
	start := time.Now()
	if _, err := admin.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	select {
	case <-allThere:
	case <-time.After(5 * time.Minute):
		b.Fatalf("%s: only %d of %d pods after 5 minutes", impl, seen.Load(), replicas)
	}
	elapsed := time.Since(start)
	b.StopTimer()

	// Let the controller finish its status update and settle, so that an
	// extra create would show in the count.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := admin.AppsV1().ReplicaSets(ns).Get(ctx, rs.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return got.Status.Replicas == replicas, nil
	})
	if err != nil {
		b.Fatalf("%s: status.replicas never reached %d: %v", impl, replicas, err)
	}
	time.Sleep(time.Second)

	counter.mu.Lock()
	byKind := map[string]int{}
	for k, v := range counter.byKind {
		byKind[k] = v
	}
	counter.mu.Unlock()
	return result{elapsed: elapsed, creates: counter.creates.Load(), writes: counter.writes.Load(), byKind: byKind}
}

// BenchmarkScaleUp scales a ReplicaSet from 0 to 1,000 pods with each
// controller. Each op is one full scale-up in a fresh namespace.
func BenchmarkScaleUp(b *testing.B) {
	e := controlPlane(b)
	// The first scale-up after start meets a cold apiserver and etcd, and
	// go test runs all of one side's -count repetitions before the other's,
	// so without a warm-up the side that runs first pays for it. One untimed
	// scale-up per side, once per process, takes that cost out of both.
	warmOnce.Do(func() {
		for _, impl := range []string{"ctrlkit", "upstream"} {
			b.StopTimer()
			res := scaleOnce(b, e, impl, fmt.Sprintf("scaleup-warmup-%s-%d", impl, time.Now().UnixNano()))
			b.Logf("warm-up %s: %v", impl, res.elapsed.Round(time.Millisecond))
		}
	})
	for _, impl := range []string{"ctrlkit", "upstream"} {
		b.Run(fmt.Sprintf("pods=%d/impl=%s", replicas, impl), func(b *testing.B) {
			var creates, writes int64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				res := scaleOnce(b, e, impl, fmt.Sprintf("scaleup-%s-%d-%d", impl, i, time.Now().UnixNano()))
				if res.creates != replicas {
					b.Errorf("%s made %d pod creates, want exactly %d (%v)", impl, res.creates, replicas, res.byKind)
				}
				creates += res.creates
				writes += res.writes
				b.Logf("%s: all %d pods in %v; writes by kind: %v", impl, replicas, res.elapsed.Round(time.Millisecond), res.byKind)
			}
			b.ReportMetric(float64(creates)/float64(b.N), "creates/op")
			b.ReportMetric(float64(writes)/float64(b.N), "writes/op")
		})
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
