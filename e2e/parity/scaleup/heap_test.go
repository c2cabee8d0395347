package scaleup

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	uprs "k8s.io/kubernetes/pkg/controller/replicaset"

	ckrs "github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/internal/benchpair"
	"github.com/ctrlkit/ctrlkit/podset"
)

const (
	// heapChildEnv, when set, makes the test binary a heap-measuring child
	// running the controller it names instead of the tests.
	heapChildEnv = "CTRLKIT_HEAP_CHILD"
	// heapConnEnv names the file with the child's connection settings.
	heapConnEnv = "CTRLKIT_HEAP_CONN"
	heapNS      = "heap"
	heapOwners  = 300
	heapPods    = 100
)

// heapConn is what the child needs to reach the apiserver and find the pods.
type heapConn struct {
	Host        string
	BearerToken string
	CAData      []byte
	Namespace   string
	Owners      int
	Pods        int
	Transform   bool
}

// heapChild runs one controller until it is synced over the populated
// namespace, then prints its live heap after GC. It returns the exit code.
func heapChild(impl string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "heap child:", err)
		return 1
	}
	raw, err := os.ReadFile(os.Getenv(heapConnEnv))
	if err != nil {
		return fail(err)
	}
	var conn heapConn
	if err := json.Unmarshal(raw, &conn); err != nil {
		return fail(err)
	}
	cfg := &rest.Config{Host: conn.Host, BearerToken: conn.BearerToken, TLSClientConfig: rest.TLSClientConfig{CAData: conn.CAData}, QPS: clientQPS, Burst: clientBurst}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
	defer cancel()
	// kube-controller-manager's informer setup: every informer drops
	// managedFields. With Transform, the pod informer's transform is
	// podset.TrimPod instead, which drops them too.
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(conn.Namespace),
		informers.WithTransform(dropManagedFields))
	podInf, rsInf := factory.Core().V1().Pods(), factory.Apps().V1().ReplicaSets()
	if conn.Transform {
		if err := podInf.Informer().SetTransform(podset.TrimPod); err != nil {
			return fail(err)
		}
	}
	var run func(context.Context)
	switch impl {
	case "upstream":
		c := uprs.NewReplicaSetController(ctx, rsInf, podInf, client, burstReplicas)
		run = func(ctx context.Context) { c.Run(ctx, workers) }
	case "ctrlkit":
		c, err := ckrs.NewReplicaSetController(ctx, client, podInf, rsInf, podset.WithBurstReplicas(burstReplicas), podset.WithWorkers(workers))
		if err != nil {
			return fail(err)
		}
		run = func(ctx context.Context) { _ = c.Run(ctx) }
	default:
		return fail(fmt.Errorf("unknown impl %q", impl))
	}
	factory.Start(ctx.Done())
	go run(ctx)
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fail(fmt.Errorf("cache of %v never synced", typ))
		}
	}
	// Synced: every ReplicaSet's status counts its pods (the first child
	// writes them; later children find them already right).
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 10*time.Minute, true, func(context.Context) (bool, error) {
		rss, err := rsInf.Lister().ReplicaSets(conn.Namespace).List(labels.Everything())
		if err != nil || len(rss) != conn.Owners {
			return false, err
		}
		for _, rs := range rss {
			if rs.Status.Replicas != int32(conn.Pods) || rs.Status.ObservedGeneration < rs.Generation {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fail(fmt.Errorf("ReplicaSets never synced: %w", err))
	}
	pods, err := podInf.Lister().Pods(conn.Namespace).List(labels.Everything())
	if err != nil || len(pods) != conn.Owners*conn.Pods {
		return fail(fmt.Errorf("pod cache holds %d pods, want %d (%v)", len(pods), conn.Owners*conn.Pods, err))
	}
	// Let the last syncs and the event sink finish, then collect.
	time.Sleep(3 * time.Second)
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	fmt.Printf("HEAP_BYTES=%d\n", s[0].Value.Uint64())
	return 0
}

// populate creates the owners and their pods directly (no controller runs
// yet): each pod carries its controller reference, so the first controller
// adopts nothing and only writes statuses. Pods stay Pending on no node: the
// apiserver has no scheduler or kubelet.
func populate(b *testing.B, admin kubernetes.Interface) {
	ctx := context.Background()
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: heapNS}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	rss := make([]*appsv1.ReplicaSet, heapOwners)
	err := createAll(ctx, heapOwners, func(ctx context.Context, i int) error {
		rs, err := admin.AppsV1().ReplicaSets(heapNS).Create(ctx, replicaSet(heapNS, fmt.Sprintf("heap-%d", i), heapPods), metav1.CreateOptions{})
		rss[i] = rs
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	err = createAll(ctx, heapOwners*heapPods, func(ctx context.Context, i int) error {
		rs := rss[i/heapPods]
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("%s-%03d", rs.Name, i%heapPods), Namespace: heapNS,
				Labels:          rs.Spec.Template.Labels,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))},
			},
			Spec: *rs.Spec.Template.Spec.DeepCopy(),
		}
		_, err := admin.CoreV1().Pods(heapNS).Create(ctx, pod, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("populated %d pods over %d ReplicaSets in %v", heapOwners*heapPods, heapOwners, time.Since(start).Round(time.Second))
}

var populated bool

// BenchmarkSteadyHeap measures each controller's live heap, after GC, once it
// is synced over 30,000 pods in 300 ReplicaSets, each in a fresh process (this
// test binary re-executed) with the same informer setup: transform=off is
// kube-controller-manager's (every informer drops managedFields),
// transform=on the same with podset.TrimPod as the pod informer's transform,
// for both controllers. One op is one child; run with -benchtime 1x -count 1
// per round (CTRLKIT_BENCH_ROUND alternates the order).
func BenchmarkSteadyHeap(b *testing.B) {
	e := controlPlane(b)
	admin, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		b.Fatal(err)
	}
	if !populated {
		populate(b, admin)
		populated = true
	}
	conn := heapConn{Host: e.Config.Host, BearerToken: e.Config.BearerToken, CAData: e.Config.CAData, Namespace: heapNS, Owners: heapOwners, Pods: heapPods}
	impls := benchpair.Order(b, "ctrlkit", "upstream")
	for _, transform := range []bool{false, true} {
		for _, impl := range impls {
			name := fmt.Sprintf("shape=%dx%d/transform=%s/impl=%s", heapOwners, heapPods, map[bool]string{false: "off", true: "on"}[transform], impl)
			b.Run(name, func(b *testing.B) {
				conn := conn
				conn.Transform = transform
				var sum float64
				for range b.N {
					sum += float64(runHeapChild(b, impl, conn))
				}
				b.ReportMetric(sum/float64(b.N)/(1<<20), "heap-MiB")
			})
		}
	}
}

// runHeapChild re-executes the test binary as a heap child and returns the
// heap bytes it printed.
func runHeapChild(b *testing.B, impl string, conn heapConn) uint64 {
	raw, err := json.Marshal(conn)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "conn.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), heapChildEnv+"="+impl, heapConnEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("heap child %s: %v", impl, err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "HEAP_BYTES="); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatalf("heap child %s printed no HEAP_BYTES line: %q", impl, out)
	return 0
}

// dropManagedFields is the transform kube-controller-manager puts on every
// informer of its shared factory (cmd/kube-controller-manager/app,
// "trim ManagedFields for memory efficiency"): objects lose their
// managedFields and nothing else.
func dropManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
