package parity

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	goruntime "runtime"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	kcontroller "k8s.io/kubernetes/pkg/controller"
	uprs "k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/utils/ptr"

	ckrs "github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/podset"
)

// upstreamSyncReplicaSet is upstream's (*ReplicaSetController).syncReplicaSet,
// the function its workers call for each queue key. Calling it directly
// times the sync itself, as ctrlkit's Reconcile is timed, without either
// side's work queue in the figure. Go 1.26's linker accepts this pull
// linkname (the restriction on unmarked targets covers only the standard
// library), so no -ldflags=-checklinkname=0 is needed.
//
//go:linkname upstreamSyncReplicaSet k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).syncReplicaSet
func upstreamSyncReplicaSet(rsc *uprs.ReplicaSetController, ctx context.Context, key string) error

// benchBurstReplicas is upstream's default burst, and ctrlkit's.
const benchBurstReplicas = 500

// syncShape is a benchmark population: owners ReplicaSets of pods pods each.
type syncShape struct{ owners, pods int }

func (s syncShape) String() string { return fmt.Sprintf("%dx%d", s.owners, s.pods) }

var syncShapes = []syncShape{{owners: 100, pods: 100}, {owners: 1, pods: 10_000}}

// syncFixture builds the ReplicaSets and their pods. Every pod is Running and
// Ready, owned by its ReplicaSet through a controller reference, with
// whole-second timestamps (what the API server stores). Each ReplicaSet's
// status already counts its pods, so a sync has nothing to write. With
// scaleDown, spec.replicas is 10% below the pod count, so each sync ranks
// its pods and deletes the surplus (up to the burst of 500).
//
// Pods are spread over nodes with several pods per node and differ in ready
// time and restarts, each ReplicaSet is owned by a Deployment, and one in ten carries a deletion cost, so that the
// scale-down ranking has real work at every level of its order.
func syncFixture(shape syncShape, scaleDown bool) ([]*appsv1.ReplicaSet, []*v1.Pod) {
	r := rand.New(rand.NewPCG(7, uint64(shape.owners*shape.pods)))
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	nodes := max(1, shape.owners*shape.pods/20)
	var rss []*appsv1.ReplicaSet
	var pods []*v1.Pod
	for i := range shape.owners {
		name := "rs-" + strconv.Itoa(i)
		labels := map[string]string{"app": name}
		want := int32(shape.pods)
		if scaleDown {
			want = int32(shape.pods * 9 / 10)
		}
		n := int32(shape.pods)
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: "bench", UID: types.UID(fmt.Sprintf("rs-uid-%06d", i)),
				Generation: 1, ResourceVersion: "1",
				CreationTimestamp: metav1.NewTime(now.Add(-40 * 24 * time.Hour)),
				// Owned by a Deployment, as almost every ReplicaSet is, so
				// that both sides look up its siblings on scale-down.
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "apps/v1", Kind: "Deployment", Name: name,
					UID: types.UID(fmt.Sprintf("deploy-uid-%06d", i)), Controller: ptr.To(true),
				}},
			},
			Spec: appsv1.ReplicaSetSpec{
				Replicas: ptr.To(want),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: v1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
				},
			},
			Status: appsv1.ReplicaSetStatus{
				Replicas: n, FullyLabeledReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
				ObservedGeneration: 1, TerminatingReplicas: ptr.To[int32](0),
			},
		}
		rss = append(rss, rs)
		ref := metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
		for j := range shape.pods {
			created := now.Add(-time.Duration(r.Int64N(30*24*3600)) * time.Second)
			ready := created.Add(time.Duration(1+r.Int64N(60)) * time.Second)
			p := &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					Name: fmt.Sprintf("%s-%05d", name, j), Namespace: "bench",
					UID:             types.UID(fmt.Sprintf("pod-uid-%06d-%05d-%08x", i, j, r.Uint32())),
					ResourceVersion: "1", Labels: labels,
					OwnerReferences:   []metav1.OwnerReference{*ref},
					CreationTimestamp: metav1.NewTime(created),
				},
				Spec: v1.PodSpec{
					NodeName:   "node-" + strconv.Itoa(r.IntN(nodes)),
					Containers: []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
				},
				Status: v1.PodStatus{
					Phase: v1.PodRunning,
					Conditions: []v1.PodCondition{
						{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(created)},
						{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready)},
						{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready)},
					},
					ContainerStatuses: []v1.ContainerStatus{{Name: "app", Ready: true, RestartCount: int32(r.IntN(10) / 8)}},
				},
			}
			if r.IntN(10) == 0 {
				p.Annotations = map[string]string{costKey: strconv.Itoa(r.IntN(100) - 50)}
			}
			pods = append(pods, p)
		}
	}
	return rss, pods
}

// syncRig is one controller over its own fake clientset and informers whose
// indexers hold copies of the fixture. The informers are never started: the
// objects are added to their indexers directly, so no watch event reaches
// the controller and its queue stays empty.
type syncRig struct {
	sync func(ctx context.Context, key string) error
	// forget drops the owner's expectations, so that the next pass deletes
	// again instead of waiting for the deletions to be observed.
	forget  func(rs *appsv1.ReplicaSet)
	client  *fake.Clientset
	deletes atomic.Int64
	writes  atomic.Int64
}

func newSyncRig(tb testing.TB, ctx context.Context, impl string, rss []*appsv1.ReplicaSet, pods []*v1.Pod) *syncRig {
	tb.Helper()
	rig := &syncRig{client: fake.NewClientset()}
	// Pod deletes succeed without touching the tracker (the pods are not in
	// it), so the same pods are there to delete on the next pass; every other
	// write is counted and would fail the steady-state check.
	rig.client.PrependReactor("delete", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		rig.deletes.Add(1)
		return true, nil, nil
	})
	rig.client.PrependReactor("*", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		switch a.GetVerb() {
		case "get", "list", "watch":
		default:
			rig.writes.Add(1)
		}
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(rig.client, 0)
	podInf, rsInf := factory.Core().V1().Pods(), factory.Apps().V1().ReplicaSets()
	switch impl {
	case "upstream":
		c := uprs.NewReplicaSetController(ctx, rsInf, podInf, rig.client, benchBurstReplicas)
		exp := upstreamExpectations(c)
		logger := klog.FromContext(ctx)
		rig.sync = func(ctx context.Context, key string) error { return upstreamSyncReplicaSet(c, ctx, key) }
		rig.forget = func(rs *appsv1.ReplicaSet) { exp.DeleteExpectations(logger, rs.Namespace+"/"+rs.Name) }
	case "ctrlkit":
		// With metrics, as upstream's sync always computes the deletion-age
		// ratio on a sorted scale-down (its histogram is not registered
		// here, so only the computation costs); ctrlkit computes it only
		// for a metrics sink.
		c, err := ckrs.NewReplicaSetController(ctx, rig.client, podInf, rsInf, podset.WithBurstReplicas(benchBurstReplicas),
			podset.WithMetrics(discardMetrics{}))
		if err != nil {
			tb.Fatal(err)
		}
		rig.sync = func(ctx context.Context, key string) error { _, err := c.Reconcile(ctx, key); return err }
		rig.forget = func(rs *appsv1.ReplicaSet) { c.Expectations().DeleteExpectations(expectations.OwnerKeyFor(rs)) }
	default:
		tb.Fatalf("unknown impl %q", impl)
	}
	for _, rs := range rss {
		if err := rsInf.Informer().GetIndexer().Add(rs.DeepCopy()); err != nil {
			tb.Fatal(err)
		}
	}
	for _, p := range pods {
		if err := podInf.Informer().GetIndexer().Add(p.DeepCopy()); err != nil {
			tb.Fatal(err)
		}
	}
	return rig
}

// discardMetrics is a metrics sink that keeps nothing.
type discardMetrics struct{}

func (discardMetrics) ObserveSync(string, time.Duration, error) {}
func (discardMetrics) ObserveDeletionAgeRatio(float64)          {}

// upstreamExpectations reads the controller's unexported expectations, the
// only way to reset them between passes short of building a new controller.
func upstreamExpectations(c *uprs.ReplicaSetController) *kcontroller.UIDTrackingControllerExpectations {
	f := reflect.ValueOf(c).Elem().FieldByName("expectations")
	return *(**kcontroller.UIDTrackingControllerExpectations)(unsafe.Pointer(f.UnsafeAddr()))
}

// pass syncs every owner once, in fixture order.
func (rig *syncRig) pass(ctx context.Context, keys []string) error {
	for _, k := range keys {
		if err := rig.sync(ctx, k); err != nil {
			return fmt.Errorf("sync %s: %w", k, err)
		}
	}
	return nil
}

// liveHeap is the process's live heap in bytes: the heap objects left after
// two collections (the second frees what the first's finalizers released).
func liveHeap() float64 {
	goruntime.GC()
	goruntime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	return float64(sample[0].Value.Uint64())
}

// processCPU is the user plus system CPU time of this process.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchCtx is a context whose logger discards, for both controllers.
func benchCtx(tb testing.TB) context.Context {
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
	tb.Cleanup(cancel)
	return ctx
}

// runSyncBench times full passes (each op syncs every owner once) and
// reports ns and allocations per owner sync. It checks what each pass wrote:
// nothing in steady state, exactly the surplus (capped by the burst) as pod
// deletes when scaling down.
func runSyncBench(b *testing.B, shape syncShape, impl string, scaleDown bool) {
	base := liveHeap()
	ctx := benchCtx(b)
	rss, pods := syncFixture(shape, scaleDown)
	rig := newSyncRig(b, ctx, impl, rss, pods)
	keys := make([]string, len(rss))
	wantDeletes := int64(0)
	for i, rs := range rss {
		keys[i] = rs.Namespace + "/" + rs.Name
		if scaleDown {
			wantDeletes += int64(min(benchBurstReplicas, shape.pods-int(*rs.Spec.Replicas)))
		}
	}
	// One untimed pass warms the caches and checks the writes.
	check := func() {
		if got := rig.deletes.Swap(0); got != wantDeletes {
			b.Fatalf("%s: a pass deleted %d pods, want %d", impl, got, wantDeletes)
		}
		if got := rig.writes.Swap(0); got != wantDeletes {
			b.Fatalf("%s: a pass sent %d writes, want %d (the pod deletes only)", impl, got, wantDeletes)
		}
	}
	reset := func() {
		for _, rs := range rss {
			rig.forget(rs)
		}
		rig.client.ClearActions()
	}
	if err := rig.pass(ctx, keys); err != nil {
		b.Fatal(err)
	}
	check()
	reset()

	// Allocations are counted as testing's allocs/op counts them
	// (MemStats.Mallocs), read while the timer is stopped.
	// CPU time (user+system of the whole process, from getrusage) is
	// reported beside the wall time: on a loaded machine a pass waits for
	// the CPU, and the wait says nothing about either controller.
	var allocs uint64
	var cpu time.Duration
	var before, after goruntime.MemStats
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		goruntime.ReadMemStats(&before)
		cpu0 := processCPU(b)
		b.StartTimer()
		if err := rig.pass(ctx, keys); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += processCPU(b) - cpu0
		goruntime.ReadMemStats(&after)
		allocs += after.Mallocs - before.Mallocs
		check()
		reset()
		b.StartTimer()
	}
	b.StopTimer()
	// The live heap the rig, its controller and the fixture hold after the
	// passes (the scale-down's memos included).
	b.ReportMetric(liveHeap()-base, "heap-B")
	goruntime.KeepAlive(rig)
	goruntime.KeepAlive(pods)
	syncs := float64(b.N * len(keys))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/syncs, "ns/sync")
	b.ReportMetric(float64(allocs)/syncs, "allocs/sync")
	b.ReportMetric(float64(cpu.Nanoseconds())/syncs, "cpu-ns/sync")
}

// BenchmarkControllerSync times a steady-state pass: every owner synced once
// with nothing to create, delete or write. See BENCHMARKS.md.
func BenchmarkControllerSync(b *testing.B) {
	impls := implOrder(b)
	for _, shape := range syncShapes {
		for _, impl := range impls {
			b.Run("shape="+shape.String()+"/impl="+impl, func(b *testing.B) { runSyncBench(b, shape, impl, false) })
		}
	}
}

// BenchmarkControllerScaleDown times a pass in which every owner is 10% over
// its spec, so each sync ranks its pods and deletes the surplus (to the fake
// clientset). Expectations are dropped between passes, untimed, on both
// sides. See BENCHMARKS.md.
func BenchmarkControllerScaleDown(b *testing.B) {
	impls := implOrder(b)
	for _, shape := range syncShapes {
		for _, impl := range impls {
			b.Run("shape="+shape.String()+"/impl="+impl, func(b *testing.B) { runSyncBench(b, shape, impl, true) })
		}
	}
}

// TestControllerBenchFixture runs one pass of each benchmark on each side,
// so that `go test` checks the fixture: a steady-state pass writes nothing,
// a scale-down pass deletes exactly the surplus, on both controllers.
func TestControllerBenchFixture(t *testing.T) {
	shape := syncShape{owners: 3, pods: 20}
	for _, scaleDown := range []bool{false, true} {
		for _, impl := range []string{"upstream", "ctrlkit"} {
			t.Run(fmt.Sprintf("scaleDown=%v/impl=%s", scaleDown, impl), func(t *testing.T) {
				ctx := benchCtx(t)
				rss, pods := syncFixture(shape, scaleDown)
				rig := newSyncRig(t, ctx, impl, rss, pods)
				keys := []string{"bench/rs-0", "bench/rs-1", "bench/rs-2"}
				if err := rig.pass(ctx, keys); err != nil {
					t.Fatal(err)
				}
				want := int64(0)
				if scaleDown {
					want = 3 * 2
				}
				if got := rig.deletes.Load(); got != want {
					t.Errorf("deletes = %d, want %d", got, want)
				}
				if got := rig.writes.Load(); got != want {
					t.Errorf("writes = %d, want %d; actions: %v", got, want, rig.client.Actions())
				}
			})
		}
	}
}
