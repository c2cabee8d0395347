package parity

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort" //nolint:depguard // drives upstream's ActivePodsWithRanks through sort.Sort, as upstream does
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/internal/benchpair"
	"github.com/ctrlkit/ctrlkit/podranking"
	"github.com/ctrlkit/ctrlkit/slowstart"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	upstream "k8s.io/kubernetes/pkg/controller"
)

// benchPods builds n pods shaped like a large ReplicaSet in a real cluster
// at scale-down time: most pods running and ready on one of n/10 nodes,
// created over the last month and ready a little after creation, a few
// pending or not ready, some with restarts, one in ten with a deletion cost.
// UIDs and instants are distinct, so both sides produce the same order.
func benchPods(n int, now time.Time) []*v1.Pod {
	now = now.Round(0) // API timestamps carry no monotonic clock reading
	r := rand.New(rand.NewPCG(42, uint64(n)))
	nodes := max(1, n/10)
	pods := make([]*v1.Pod, n)
	for i := range pods {
		created := now.Add(-time.Duration(r.Int64N(int64(30*24*time.Hour))) - time.Duration(i))
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: "pod-" + strconv.Itoa(i), Namespace: "default",
				UID:               types.UID(fmt.Sprintf("%08x-%08x", r.Uint32(), i)),
				CreationTimestamp: metav1.NewTime(created),
			},
			Spec:   v1.PodSpec{NodeName: "node-" + strconv.Itoa(r.IntN(nodes))},
			Status: v1.PodStatus{Phase: v1.PodRunning},
		}
		switch k := r.IntN(100); {
		case k < 3:
			p.Spec.NodeName = ""
			p.Status.Phase = v1.PodPending
		case k < 8:
			p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: metav1.NewTime(created)}}
		default:
			ready := created.Add(time.Duration(r.Int64N(int64(time.Minute))) + time.Second)
			p.Status.Conditions = []v1.PodCondition{
				{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(created)},
				{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready)},
				{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready)},
			}
		}
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app", RestartCount: int32(r.IntN(10) / 8)}}
		if r.IntN(10) == 0 {
			p.Annotations = map[string]string{costKey: strconv.Itoa(r.IntN(100) - 50)}
		}
		pods[i] = p
	}
	return pods
}

var benchSink []*v1.Pod

// rankingSet is one input set of the ranking benchmarks.
type rankingSet struct {
	name string
	pods func(n int, now time.Time) []*v1.Pod
}

// rankingSets: "rollout" and "month" are production-shaped (whole-second
// timestamps, about 90% Running and Ready, cost mostly absent, pods over
// 10 to 500 nodes), created by one rollout of five minutes, in which dozens
// of pods share each creation and ready second, or each on its own second
// of the last month; "today" is benchPods, the set earlier figures used
// (nanosecond instants, every instant distinct).
var rankingSets = []rankingSet{
	{"rollout", func(n int, now time.Time) []*v1.Pod {
		return productionPods(rand.New(rand.NewPCG(7, uint64(n))), now, prodShape{n: n, nodes: min(max(n/20, 10), 500), rollout: 5 * time.Minute, rollouts: 1, costs: true})
	}},
	{"month", func(n int, now time.Time) []*v1.Pod {
		return productionPods(rand.New(rand.NewPCG(8, uint64(n))), now, prodShape{n: n, nodes: min(max(n/20, 10), 500), rollouts: 1, costs: true})
	}},
	{"today", benchPods},
}

// implOrder is the order of this round's pairs (see benchpair).
func implOrder(b *testing.B) []string { return benchpair.Order(b, "ctrlkit", "upstream") }

// cpuTime is the CPU time the process has used, user and system. Reported
// per op beside ns/op, it measures each side's work even when other
// processes share the cores and stretch the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loopWithCPU runs body under b.Loop and reports cpu-ns/op.
func loopWithCPU(b *testing.B, body func()) {
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		body()
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// upstreamGetPodsToDelete is the ReplicaSet controller's getPodsToDelete on
// a copy of pods (it sorts the caller's slice in place): rank by related
// pods with IsPodActive, sort.Sort upstream's ActivePodsWithRanks at
// metav1.Now(), slice. The copy is a few microseconds at N=10,000 against
// milliseconds of sorting.
func upstreamGetPodsToDelete(work, pods []*v1.Pod, diff int) []*v1.Pod {
	copy(work, pods)
	sort.Sort(upstream.ActivePodsWithRanks{Pods: work, Rank: upstreamRelatedRanks(work, pods), Now: metav1.Now()})
	return work[:diff]
}

// BenchmarkPodsToDelete compares choosing the pods to delete on scale-down:
// podranking.PodsToDelete against upstream's getPodsToDelete, with the pods
// themselves as related pods (a ReplicaSet without siblings), diff = 5% of
// the pods. Names pair with benchstat -col /impl.
func BenchmarkPodsToDelete(b *testing.B) {
	impls := implOrder(b)
	for _, set := range rankingSets {
		for _, n := range []int{1_000, 10_000} {
			pods := set.pods(n, time.Now())
			diff := n / 20
			for _, impl := range impls {
				b.Run(fmt.Sprintf("set=%s/N=%d/diff=%d/impl=%s", set.name, n, diff, impl), func(b *testing.B) {
					work := make([]*v1.Pod, n)
					loopWithCPU(b, func() {
						if impl == "ctrlkit" {
							benchSink = podranking.PodsToDelete(pods, pods, diff)
						} else {
							benchSink = upstreamGetPodsToDelete(work, pods, diff)
						}
					})
				})
			}
		}
	}
}

// BenchmarkOrder compares the full deletion order: a Selector's Order
// against ranking and sort.Sort with upstream's ActivePodsWithRanks.
func BenchmarkOrder(b *testing.B) {
	impls := implOrder(b)
	sel := podranking.NewSelector()
	for _, set := range rankingSets {
		for _, n := range []int{1_000, 10_000} {
			pods := set.pods(n, time.Now())
			for _, impl := range impls {
				b.Run(fmt.Sprintf("set=%s/N=%d/impl=%s", set.name, n, impl), func(b *testing.B) {
					work := make([]*v1.Pod, n)
					loopWithCPU(b, func() {
						if impl == "ctrlkit" {
							benchSink = sel.Order(pods, pods)
						} else {
							benchSink = upstreamGetPodsToDelete(work, pods, n)
						}
					})
				})
			}
		}
	}
}

// BenchmarkExpectations is the hot path of a ReplicaSet-style controller,
// from parallel goroutines over 1,000 owners: a sync expects one creation,
// the informer observes it, the next sync checks the owner. One op is all
// three calls. The owners are dealt out between the goroutines, as a
// workqueue never hands one key to two workers at once; with shared keys an
// Expect from one goroutine between another's Observe and Satisfied would
// legitimately leave the owner unsatisfied, on both sides. ctrlkit keys
// bind the owner's UID (OwnerKey), as the example controller does; upstream
// keys are namespace/name. Upstream gets the production logger
// (klog.Background), whose V(4) calls are disabled.
func BenchmarkExpectations(b *testing.B) {
	const owners = 1000
	ckKeys := make([]string, owners)
	upKeys := make([]string, owners)
	for i := range owners {
		name := "rs-" + strconv.Itoa(i)
		ckKeys[i] = expectations.OwnerKey("default", name, types.UID("uid-"+strconv.Itoa(i)))
		upKeys[i] = "default/" + name
	}
	benchpair.Run(b, "ExpectObserveSatisfied/keys=1000/", "upstream",
		func(b *testing.B) {
			c := expectations.NewControllerExpectations()
			var next atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				mine := ownedKeys(ckKeys, int(next.Add(1)-1))
				for i := 0; pb.Next(); i++ {
					key := mine[i%len(mine)]
					_ = c.ExpectCreations(key, 1)
					c.CreationObserved(key)
					if !c.SatisfiedExpectations(key) {
						b.Error("not satisfied after the observation")
						return
					}
				}
			})
		},
		func(b *testing.B) {
			c := upstream.NewControllerExpectations()
			logger := klog.Background()
			var next atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				mine := ownedKeys(upKeys, int(next.Add(1)-1))
				for i := 0; pb.Next(); i++ {
					key := mine[i%len(mine)]
					_ = c.ExpectCreations(logger, key, 1)
					c.CreationObserved(logger, key)
					if !c.SatisfiedExpectations(logger, key) {
						b.Error("not satisfied after the observation")
						return
					}
				}
			})
		})
}

// ownedKeys deals keys out round-robin between GOMAXPROCS goroutines (the
// RunParallel default) and returns goroutine g's share.
func ownedKeys(keys []string, g int) []string {
	n := runtime.GOMAXPROCS(0)
	var mine []string
	for i := g % n; i < len(keys); i += n {
		mine = append(mine, keys[i])
	}
	return mine
}

// goroutinePerCallBatch is the baseline for slow start: the shape of the
// ReplicaSet controller's unexported slowStartBatch, written for this test.
// Each batch starts one goroutine per call, waits on a WaitGroup, collects
// failures in a channel sized to the batch, and the first failing batch ends
// the run with one of its errors.
func goroutinePerCallBatch(count, initial int, fn func() error) (int, error) {
	done, left := 0, count
	for size := min(left, initial); size > 0; size = min(size*2, left) {
		failures := make(chan error, size)
		var wg sync.WaitGroup
		for range size {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := fn(); err != nil {
					failures <- err
				}
			}()
		}
		wg.Wait()
		done += size - len(failures)
		if len(failures) > 0 {
			return done, <-failures
		}
		left -= size
	}
	return done, nil
}

// BenchmarkSlowStart measures the scheduling overhead of a whole slow-start
// run of 1,000 no-op calls (batches 1, 2, 4, ..., 489).
func BenchmarkSlowStart(b *testing.B) {
	const count = 1000
	ctx := context.Background()
	benchpair.Run(b, "count=1000/", "goroutinepercall", func(b *testing.B) {
		fn := func(context.Context) error { return nil }
		b.ReportAllocs()
		for b.Loop() {
			if n, err := slowstart.Batch(ctx, count, slowstart.InitialBatchSize, fn); n != count || err != nil {
				b.Fatalf("got (%d, %v)", n, err)
			}
		}
	}, func(b *testing.B) {
		fn := func() error { return nil }
		b.ReportAllocs()
		for b.Loop() {
			if n, err := goroutinePerCallBatch(count, slowstart.InitialBatchSize, fn); n != count || err != nil {
				b.Fatalf("got (%d, %v)", n, err)
			}
		}
	})
}

// TestBenchPodsAgree keeps the benchmarks honest: on each benchmark input
// set both sides choose the same pods in the same order.
func TestBenchPodsAgree(t *testing.T) {
	now := time.Now()
	for _, set := range rankingSets {
		pods := set.pods(2000, now)
		sel := podranking.NewSelector(podranking.WithNow(now))
		for _, diff := range []int{100, 1000} {
			if !samePods(sel.PodsToDelete(pods, pods, diff), upstreamPodsToDelete(pods, pods, diff, now)) {
				t.Fatalf("set %s, diff %d: ctrlkit and upstream disagree", set.name, diff)
			}
		}
		full := upstream.ActivePodsWithRanks{Pods: slices.Clone(pods), Rank: upstreamRelatedRanks(pods, pods), Now: metav1.NewTime(now)}
		sort.Sort(full)
		if !samePods(sel.Order(pods, pods), full.Pods) {
			t.Fatalf("set %s: full order differs", set.name)
		}
	}
}
