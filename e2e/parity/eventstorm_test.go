package parity

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	uprs "k8s.io/kubernetes/pkg/controller/replicaset"

	ckrs "github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/podset"
)

// stormShapes: many small owners, and one large one.
var stormShapes = []syncShape{{owners: 100, pods: 100}, {owners: 1, pods: 10_000}}

// stormWorkers is kube-controller-manager's default for the ReplicaSet
// controller (--concurrent-replicaset-syncs), on both sides.
const stormWorkers = 5

// stormRig is one running controller, with its workers and started
// informers, over its own fake clientset holding the fixture's objects.
// syncs counts the syncs the controller has finished; reaching want
// signals done.
type stormRig struct {
	client *fake.Clientset
	syncs  atomic.Int64
	want   atomic.Int64
	done   chan struct{}
	writes atomic.Int64
	rss    []*appsv1.ReplicaSet // the objects the storms update, annotated by the last one
}

func (rig *stormRig) synced() {
	if rig.syncs.Add(1) == rig.want.Load() {
		rig.done <- struct{}{}
	}
}

// stormMetrics counts ctrlkit's finished syncs.
type stormMetrics struct{ rig *stormRig }

func (m stormMetrics) ObserveSync(string, time.Duration, error) { m.rig.synced() }
func (stormMetrics) ObserveDeletionAgeRatio(float64)            {}

// upstreamSyncHandler is the field upstream's workers call per key; the
// rig wraps it to count finished syncs, as ctrlkit's are counted through
// its metrics.
func upstreamSyncHandler(c *uprs.ReplicaSetController) *func(context.Context, string) error {
	f := reflect.ValueOf(c).Elem().FieldByName("syncHandler")
	return (*func(context.Context, string) error)(unsafe.Pointer(f.UnsafeAddr()))
}

// newStormRig starts impl's controller at its defaults (upstream's
// feature gates, the consistency store on), with stormWorkers workers and
// the burst of the other benchmarks, over a fake clientset that holds rss
// and pods, and waits until the start-up syncs are over.
func newStormRig(tb testing.TB, ctx context.Context, impl string, rss []*appsv1.ReplicaSet, pods []*v1.Pod) *stormRig {
	tb.Helper()
	objs := make([]runtime.Object, 0, len(rss)+len(pods))
	for _, rs := range rss {
		objs = append(objs, rs.DeepCopy())
	}
	for _, p := range pods {
		objs = append(objs, p.DeepCopy())
	}
	// The simple clientset: NewClientset's field-managed tracker builds a
	// REST mapper on every patch or update, which would make the
	// clientset, not either controller, most of a storm.
	rig := &stormRig{client: fake.NewSimpleClientset(objs...), done: make(chan struct{}, 1)} //nolint:staticcheck // see above
	rig.rss = slices.Clone(rss)
	rig.want.Store(-1)
	rig.client.PrependReactor("*", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		switch a.GetVerb() {
		case "get", "list", "watch":
		default:
			if a.GetResource().Resource != "replicasets" || a.GetVerb() != "update" || a.GetSubresource() != "" {
				rig.writes.Add(1)
			}
		}
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(rig.client, 0)
	podInf, rsInf := factory.Core().V1().Pods(), factory.Apps().V1().ReplicaSets()
	var run func(ctx context.Context)
	switch impl {
	case "upstream":
		c := uprs.NewReplicaSetController(ctx, rsInf, podInf, rig.client, benchBurstReplicas)
		h := upstreamSyncHandler(c)
		sync := *h
		*h = func(ctx context.Context, key string) error {
			err := sync(ctx, key)
			rig.synced()
			return err
		}
		run = func(ctx context.Context) { c.Run(ctx, stormWorkers) }
	case "ctrlkit":
		c, err := ckrs.NewReplicaSetController(ctx, rig.client, podInf, rsInf, podset.WithBurstReplicas(benchBurstReplicas),
			podset.WithWorkers(stormWorkers), podset.WithMetrics(stormMetrics{rig}))
		if err != nil {
			tb.Fatal(err)
		}
		run = func(ctx context.Context) { _ = c.Run(ctx) }
	default:
		tb.Fatalf("unknown impl %q", impl)
	}
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			tb.Fatalf("%s: informer of %v did not sync", impl, typ)
		}
	}
	go run(ctx)
	// The start-up syncs (every owner, and again for pods seen after it)
	// are over once the count rests.
	for last := int64(-1); ; {
		time.Sleep(200 * time.Millisecond)
		n := rig.syncs.Load()
		if n == last && n >= int64(len(rss)) {
			break
		}
		last = n
	}
	if n := rig.writes.Load(); n != 0 {
		tb.Fatalf("%s: %d writes at start-up, want none: every status is already right", impl, n)
	}
	return rig
}

// storm touches every owner with an annotation and waits until the
// controller has finished one sync per owner. It returns the time from
// the first update to the last sync.
func (rig *stormRig) storm(tb testing.TB, ctx context.Context, round int) time.Duration {
	rss := rig.rss
	// The updated objects are made before the clock starts.
	next := make([]*appsv1.ReplicaSet, len(rss))
	for i, rs := range rss {
		next[i] = rs.DeepCopy()
		metav1.SetMetaDataAnnotation(&next[i].ObjectMeta, "bench/storm", strconv.Itoa(round))
	}
	rig.want.Store(rig.syncs.Load() + int64(len(rss)))
	start := time.Now()
	for i, rs := range next {
		updated, err := rig.client.AppsV1().ReplicaSets(rs.Namespace).Update(ctx, rs, metav1.UpdateOptions{})
		if err != nil {
			tb.Fatal(err)
		}
		rss[i] = updated
	}
	select {
	case <-rig.done:
	case <-time.After(time.Minute):
		tb.Fatalf("%d of %d syncs after a minute", rig.syncs.Load()-(rig.want.Load()-int64(len(rss))), len(rss))
	}
	took := time.Since(start)
	if n := rig.writes.Load(); n != 0 {
		tb.Fatalf("%d writes during the storm, want none", n)
	}
	// The fake clientset records every action with a copy of its object;
	// kept, they would grow the heap with the number of storms, which is
	// larger for the faster side.
	rig.client.ClearActions()
	return took
}

// BenchmarkEventStorm times the controller under a storm of owner updates:
// R ReplicaSets of P Running, Ready, owned pods, every status already
// right, each controller running (stormWorkers workers, informers started)
// on its own fake clientset holding identical objects. One op touches every
// ReplicaSet with an annotation (a merge patch through the clientset, which
// the informers deliver as an update event) and lasts from the first patch
// until the controller has finished R syncs, each of which writes nothing.
// Besides the mean (sec/op) it reports the 25th and 75th percentiles of the
// storms, the process's CPU time per storm and how much its live heap
// (liveHeap) grew from before the rig was built to after the storms: the
// controller, its informers' caches, the fake clientset's objects and the
// fixture, alike on both sides but for the controller.
func BenchmarkEventStorm(b *testing.B) {
	impls := implOrder(b)
	for _, shape := range stormShapes {
		for _, impl := range impls {
			b.Run("shape="+shape.String()+"/impl="+impl, func(b *testing.B) {
				// The rig of the benchmark before stops with its context;
				// its goroutines are given a moment to let go of it.
				time.Sleep(300 * time.Millisecond)
				base := liveHeap()
				ctx, cancel := context.WithCancel(benchCtx(b))
				defer cancel()
				rss, pods := syncFixture(shape, false)
				rig := newStormRig(b, ctx, impl, rss, pods)
				var took []time.Duration
				b.ReportAllocs()
				cpu0 := processCPU(b)
				for b.Loop() {
					took = append(took, rig.storm(b, ctx, len(took)))
				}
				cpu := processCPU(b) - cpu0
				b.ReportMetric(liveHeap()-base, "heap-B")
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/4].Nanoseconds()), "p25-ns/storm")
				b.ReportMetric(float64(took[len(took)*3/4].Nanoseconds()), "p75-ns/storm")
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/storm")
			})
		}
	}
}

// TestEventStormFixture runs a few storms on each side in a plain go test:
// every owner is synced once per storm and nothing is written.
func TestEventStormFixture(t *testing.T) {
	shape := syncShape{owners: 5, pods: 20}
	for _, impl := range []string{"upstream", "ctrlkit"} {
		t.Run(fmt.Sprintf("impl=%s", impl), func(t *testing.T) {
			ctx, cancel := context.WithCancel(benchCtx(t))
			defer cancel()
			rss, pods := syncFixture(shape, false)
			rig := newStormRig(t, ctx, impl, rss, pods)
			for round := range 3 {
				rig.storm(t, ctx, round)
			}
		})
	}
}
