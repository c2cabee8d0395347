package binary

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ctrlkit/ctrlkit/e2e/kubetest"
)

// BenchmarkRingFootprint measures what a ring divides: for a 0 → owners×10
// pod scale-up, the steady heap and the CPU of one unsharded replica doing
// everything, against each of three ring replicas, with the API server
// filtering (ShardedListAndWatch on) and without. It takes minutes, so it
// is a benchmark, run on request: -run '^$' -bench RingFootprint
// -benchtime 1x (owners from CTRLKIT_E2E_RING_OWNERS, default 300).
func BenchmarkRingFootprint(b *testing.B) {
	for range b.N {
		ringFootprint(b)
	}
}

func ringFootprint(t *testing.B) {
	owners := ringOwners(t)
	t.Run("client-filtered", func(t *testing.B) { measureFootprint(t, env, shipped, "fp-client", owners, byUID) })
	t.Run("server-filtered", func(t *testing.B) {
		gated, id := startShardedPlane(t)
		measureFootprint(t, gated, id, "fp-server", owners, byUID)
	})
	t.Run("namespace-server-filtered", func(t *testing.B) {
		gated, id := startShardedPlane(t)
		measureFootprint(t, gated, id, "fp-namespace", owners, byNamespace)
	})
}

// footprintLayout is where the owners live and how the ring spreads them.
type footprintLayout struct {
	// shardBy is the ring's --shard-by.
	shardBy string
	// namespaces spreads the owners round robin over this many namespaces
	// of their own, watched cluster-wide; 0 keeps them in the scenario's
	// namespace, the only one the processes watch.
	namespaces int
}

var (
	byUID       = footprintLayout{shardBy: "uid"}
	byNamespace = footprintLayout{shardBy: "namespace", namespaces: 30}
)

// footprint is one process's cost of a scale-up: its live heap idle before
// it (what any process of the binary holds) and steady after it, and the
// CPU it spent.
type footprint struct {
	idleMiB, heapMiB, cpuSec float64
}

func measureFootprint(t testing.TB, e *kubetest.Env, id *identity, ring string, owners int, layout footprintLayout) {
	single := runFootprint(t, e, id, ring, owners, 1, layout)
	three := runFootprint(t, e, id, ring, owners, 3, layout)
	var heaps, idles, cpus []float64
	for _, f := range three {
		heaps = append(heaps, f.heapMiB)
		idles = append(idles, f.idleMiB)
		cpus = append(cpus, f.cpuSec)
	}
	maxHeap, maxCPU := slices.Max(heaps), slices.Max(cpus)
	t.Logf("0 → %d pods: one unsharded replica heap %.1f MiB (idle %.1f), CPU %.2f s; ring of three: heap %.1f/%.1f/%.1f MiB (idle %.1f/%.1f/%.1f), CPU %.2f/%.2f/%.2f s; largest replica ÷ single: heap %.2f×, CPU %.2f×",
		owners*10, single[0].heapMiB, single[0].idleMiB, single[0].cpuSec, heaps[0], heaps[1], heaps[2], idles[0], idles[1], idles[2], cpus[0], cpus[1], cpus[2],
		maxHeap/single[0].heapMiB, maxCPU/single[0].cpuSec)
	require.Less(t, maxHeap, single[0].heapMiB, "a ring replica holds as much heap as one replica doing everything")
}

// runFootprint starts n processes (one without --shard-ring when n is 1,
// a ring of n otherwise), scales owners ReplicaSets from nothing to 10 pods
// each, and returns each process's footprint. With a namespace layout, it
// deletes what it created before returning: the next run's processes watch
// every namespace too.
func runFootprint(t testing.TB, e *kubetest.Env, id *identity, ring string, owners, n int, layout footprintLayout) []footprint {
	s := newScenarioOn(t, 20*time.Minute, e)
	namespaces := []string{s.ns}
	scope := []string{"--namespace=" + s.ns}
	if layout.namespaces > 0 {
		namespaces, scope = s.createNamespaces(layout.namespaces), nil
		defer s.emptyNamespaces(namespaces)
	}
	t.Cleanup(func() {
		_ = s.client.CoordinationV1().Leases(controllerNamespace).DeleteCollection(context.Background(), metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: "shard.ctrlkit.io/ring=" + ring})
	})
	var procs []*controllerProcess
	var scrapers []*metricsScraper
	for i := range n {
		args := append([]string{"--kubeconfig=" + id.kubeconfig, "--v=1", "--profiling"}, scope...)
		args = append(args, ringThroughput...)
		if n > 1 {
			args = append(args, ringArgs(ring, fmt.Sprintf("r%d", i))...)
			args = append(args, "--shard-by="+layout.shardBy)
		}
		p := startController(t, fmt.Sprintf("fp%d-%d", n, i), args...)
		procs = append(procs, p)
		scrapers = append(scrapers, &metricsScraper{url: p.metricsURL + "/metrics", client: &http.Client{Timeout: 5 * time.Second}})
	}
	value := func(i int, name string) float64 {
		f := scrapers[i].scrape(s.ctx, t)[name]
		require.NotNil(t, f, "%s not served", name)
		m := f.GetMetric()[0]
		if m.GetCounter() != nil {
			return m.GetCounter().GetValue()
		}
		return m.GetGauge().GetValue()
	}
	for _, p := range procs {
		p.waitReady(s.ctx, t)
	}
	if n > 1 {
		s.waitFor("the ring to share the space", func() (bool, string) {
			var sum float64
			var held []float64
			for i := range procs {
				h := value(i, "ctrlkit_shard_held_fraction")
				held = append(held, h)
				sum += h
			}
			return sum > 0.9999 && slices.Min(held) > 0, fmt.Sprintf("held %v", held)
		})
	}
	out := make([]footprint, n)
	cpu0 := make([]float64, n)
	for i, p := range procs {
		out[i].idleMiB = liveHeapMiB(s.ctx, t, p)
		cpu0[i] = value(i, "process_cpu_seconds_total")
	}
	names := make([]string, owners)
	for i := range names {
		names[i] = fmt.Sprintf("o%03d", i)
	}
	namespaceOf := func(i int) string { return namespaces[i%len(namespaces)] }
	start := time.Now()
	parallel(t, names, func(name string) error {
		i := slices.Index(names, name)
		_, err := s.createReplicaSetIn(namespaceOf(i), name, 10)
		return err
	})
	s.waitFor("every ReplicaSet at 10 pods", func() (bool, string) {
		done := 0
		for _, ns := range namespaces {
			list, err := s.client.AppsV1().ReplicaSets(ns).List(s.ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, rs := range list.Items {
				if rs.Status.Replicas == 10 && rs.Status.ObservedGeneration == rs.Generation {
					done++
				}
			}
		}
		return done == owners, fmt.Sprintf("%d of %d settled", done, owners)
	})
	took := time.Since(start)
	for i := range procs {
		out[i].cpuSec = value(i, "process_cpu_seconds_total") - cpu0[i]
	}
	// Steady heap: the live heap once the scale-up has settled, 3 s after
	// every status, each process collecting its garbage first.
	time.Sleep(3 * time.Second)
	for i, p := range procs {
		out[i].heapMiB = liveHeapMiB(s.ctx, t, p)
	}
	for i, p := range procs {
		t.Logf("%s: 0 → %d pods in %s; CPU %.2f s, idle heap %.1f MiB, steady heap %.1f MiB", p.name, owners*10, took.Round(time.Millisecond), out[i].cpuSec, out[i].idleMiB, out[i].heapMiB)
		p.signal(t, syscall.SIGTERM)
	}
	for _, p := range procs {
		require.Equal(t, 0, p.wait(t, 40*time.Second), "%s: exit code", p.name)
	}
	return out
}

// liveHeapMiB is p's heap after a garbage collection: the heap profile,
// asked with gc=1, collects first and then reports the heap in use as
// "# HeapAlloc = <bytes>". The least of three readings a second apart, so
// that a sync or list in flight at one reading does not count.
func liveHeapMiB(ctx context.Context, t testing.TB, p *controllerProcess) float64 {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	least := math.Inf(1)
	for i := range 3 {
		if i > 0 {
			time.Sleep(time.Second)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.metricsURL+"/debug/pprof/heap?gc=1&debug=1", nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err, "%s: heap profile", p.name)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: heap profile (is --profiling set?)", p.name)
		_, rest, ok := strings.Cut(string(body), "# HeapAlloc = ")
		require.True(t, ok, "%s: no HeapAlloc in the heap profile", p.name)
		digits, _, _ := strings.Cut(rest, "\n")
		bytes, err := strconv.ParseFloat(strings.TrimSpace(digits), 64)
		require.NoError(t, err, "%s: HeapAlloc %q", p.name, digits)
		least = min(least, bytes/(1<<20))
	}
	return least
}

// createNamespaces creates k namespaces named after the scenario's.
func (s *scenario) createNamespaces(k int) []string {
	s.t.Helper()
	out := make([]string, k)
	for i := range out {
		ns, err := s.client.CoreV1().Namespaces().Create(s.ctx, &corev1.Namespace{
			ObjectMeta: metav1.ObjectMeta{GenerateName: s.ns + "-"},
		}, metav1.CreateOptions{})
		require.NoError(s.t, err)
		out[i] = ns.Name
	}
	return out
}

// emptyNamespaces deletes the ReplicaSets and pods of namespaces and waits
// until no pod is left: this control plane runs no garbage collector or
// namespace controller, and no kubelet, so unscheduled pods go at once.
func (s *scenario) emptyNamespaces(namespaces []string) {
	s.t.Helper()
	for _, ns := range namespaces {
		require.NoError(s.t, s.client.AppsV1().ReplicaSets(ns).DeleteCollection(s.ctx, metav1.DeleteOptions{}, metav1.ListOptions{}))
		require.NoError(s.t, s.client.CoreV1().Pods(ns).DeleteCollection(s.ctx, metav1.DeleteOptions{}, metav1.ListOptions{}))
	}
	s.waitFor("the namespaces emptied", func() (bool, string) {
		left := 0
		for _, ns := range namespaces {
			list, err := s.client.CoreV1().Pods(ns).List(s.ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			left += len(list.Items)
		}
		return left == 0, fmt.Sprintf("%d pods left", left)
	})
}
