package binary

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"

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
	owners := 300
	if os.Getenv(ringOwnersEnv) != "" {
		owners = ringOwners(t)
	}
	t.Run("client-filtered", func(t *testing.B) { measureFootprint(t, env, shipped, "fp-client", owners) })
	t.Run("server-filtered", func(t *testing.B) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		gated, err := kubetest.Start(ctx, kubetest.WithLogf(log.Printf), kubetest.WithRBAC(),
			kubetest.WithAPIServerFlags("--feature-gates=ShardedListAndWatch=true"))
		require.NoError(t, err)
		t.Cleanup(func() { _ = gated.Stop() })
		for _, m := range rbacManifests {
			_, err := gated.ApplyManifestFile(ctx, m)
			require.NoError(t, err)
		}
		token, err := gated.ServiceAccountToken(ctx, controllerNamespace, controllerAccount, tokenLifetime)
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "kubeconfig")
		require.NoError(t, gated.WriteKubeconfig(path, token))
		id := &identity{user: serviceaccount.MakeUsername(controllerNamespace, controllerAccount), token: token, kubeconfig: path}
		measureFootprint(t, gated, id, "fp-server", owners)
	})
}

// footprint is one process's cost of a scale-up.
type footprint struct {
	heapMiB, cpuSec float64
}

func measureFootprint(t testing.TB, e *kubetest.Env, id *identity, ring string, owners int) {
	single := runFootprint(t, e, id, ring, owners, 1)
	three := runFootprint(t, e, id, ring, owners, 3)
	var heaps, cpus []float64
	for _, f := range three {
		heaps = append(heaps, f.heapMiB)
		cpus = append(cpus, f.cpuSec)
	}
	maxHeap, maxCPU := slices.Max(heaps), slices.Max(cpus)
	t.Logf("0 → %d pods: one unsharded replica heap %.1f MiB, CPU %.2f s; ring of three: heap %.1f/%.1f/%.1f MiB, CPU %.2f/%.2f/%.2f s; largest replica ÷ single: heap %.2f×, CPU %.2f×",
		owners*10, single[0].heapMiB, single[0].cpuSec, heaps[0], heaps[1], heaps[2], cpus[0], cpus[1], cpus[2],
		maxHeap/single[0].heapMiB, maxCPU/single[0].cpuSec)
	require.Less(t, maxHeap, single[0].heapMiB, "a ring replica holds as much heap as one replica doing everything")
}

// runFootprint starts n processes (one without --shard-ring when n is 1,
// a ring of n otherwise), scales owners ReplicaSets from nothing to 10 pods
// each, and returns each process's steady heap and the CPU it spent.
func runFootprint(t testing.TB, e *kubetest.Env, id *identity, ring string, owners, n int) []footprint {
	s := newScenarioOn(t, 20*time.Minute, e)
	t.Cleanup(func() {
		_ = s.client.CoordinationV1().Leases(controllerNamespace).DeleteCollection(context.Background(), metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: "shard.ctrlkit.io/ring=" + ring})
	})
	var procs []*controllerProcess
	var scrapers []*metricsScraper
	for i := range n {
		args := []string{"--kube-api-qps=200", "--kube-api-burst=400", "--v=1"}
		if n > 1 {
			args = append(args, "--shard-ring="+ring, fmt.Sprintf("--shard-identity=r%d", i), "--shard-lease-namespace="+controllerNamespace,
				"--shard-lease-duration="+ringLease.String(), "--shard-renew-interval="+ringRenew.String(),
				"--shard-safety-margin="+ringMargin.String())
		}
		p := startController(t, fmt.Sprintf("fp%d-%d", n, i), append(s.controllerArgs(id.kubeconfig), args...)...)
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
	cpu0 := make([]float64, n)
	for i := range procs {
		cpu0[i] = value(i, "process_cpu_seconds_total")
	}
	names := make([]string, owners)
	for i := range names {
		names[i] = fmt.Sprintf("o%03d", i)
	}
	start := time.Now()
	parallel(t, names, func(name string) error { return s.createReplicaSetErr(name, 10) })
	s.waitFor("every ReplicaSet at 10 pods", func() (bool, string) {
		list, err := s.client.AppsV1().ReplicaSets(s.ns).List(s.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		done := 0
		for _, rs := range list.Items {
			if rs.Status.Replicas == 10 && rs.Status.ObservedGeneration == rs.Generation {
				done++
			}
		}
		return done == owners, fmt.Sprintf("%d of %d settled", done, owners)
	})
	took := time.Since(start)
	out := make([]footprint, n)
	for i := range procs {
		out[i].cpuSec = value(i, "process_cpu_seconds_total") - cpu0[i]
	}
	// Steady heap: the least live heap seen over 5 s of idling, sampled
	// every 250 ms, so that garbage waiting for the next GC does not count.
	time.Sleep(3 * time.Second)
	for range 20 {
		for i := range procs {
			h := value(i, "go_memstats_heap_alloc_bytes") / (1 << 20)
			if out[i].heapMiB == 0 || h < out[i].heapMiB {
				out[i].heapMiB = h
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	for i, p := range procs {
		t.Logf("%s: 0 → %d pods in %s; CPU %.2f s, steady heap %.1f MiB", p.name, owners*10, took.Round(time.Millisecond), out[i].cpuSec, out[i].heapMiB)
		p.signal(t, syscall.SIGTERM)
	}
	for _, p := range procs {
		require.Equal(t, 0, p.wait(t, 40*time.Second), "%s: exit code", p.name)
	}
	return out
}
