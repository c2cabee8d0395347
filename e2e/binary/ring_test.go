package binary

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/e2e/kubetest"
	"github.com/ctrlkit/ctrlkit/shard"
)

// Ring timing of the scenarios: short, so that a dead replica's share moves
// within seconds, and proportioned as the binary requires.
const (
	ringLease  = 6 * time.Second
	ringRenew  = time.Second
	ringMargin = 2 * time.Second
)

// ringSchedulingSlack is what the take-over bounds allow beyond the
// protocol's own delays. On a quiet machine the share is re-held 6.8 to
// 8.6 s after the kill and its last owner written 9.5 to 12.3 s after it;
// with the other e2e packages or the race tests sharing two cores, up to
// 13.8 and 21 s. The protocol's bound of a Lease and 5 s is checked
// without scheduling noise by shard's simulations on fake clocks
// (TestSkewedClocks); here a replica that never took over, or an owner
// lost, still fails, and so does a take-over slower than the slack.
const ringSchedulingSlack = 15 * time.Second

// ringOwnersEnv sets how many ReplicaSets the ring scenarios create (ten
// pods each) instead of the default 300.
const ringOwnersEnv = "CTRLKIT_E2E_RING_OWNERS"

// ringThroughput is how fast each replica may write and how many owners it
// syncs at once. A survivor takes the dead replica's owners over on top of
// its own backlog, and the last of them is first written only once the
// writes queued before it are through: with the binary's defaults (20 QPS,
// 5 workers) that takes tens of seconds at 300 owners. These are the
// figures the footprint benchmark also runs with; the README's "When to
// shard" says how to size them.
var ringThroughput = []string{"--kube-api-qps=200", "--kube-api-burst=400", "--workers=40"}

// ringArgs join the ring named ring as identity, with the scenarios' timing.
func ringArgs(ring, identity string) []string {
	return []string{
		"--shard-ring=" + ring, "--shard-identity=" + identity, "--shard-lease-namespace=" + controllerNamespace,
		"--shard-lease-duration=" + ringLease.String(), "--shard-renew-interval=" + ringRenew.String(),
		"--shard-safety-margin=" + ringMargin.String(),
	}
}

func ringOwners(t testing.TB) int {
	if v := os.Getenv(ringOwnersEnv); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, ringOwnersEnv)
		return n
	}
	return 300
}

// TestRingClientFiltered runs the ring scenario on the package's control
// plane, where ShardedListAndWatch is off: each replica filters its share on
// the client.
func TestRingClientFiltered(t *testing.T) {
	runRing(t, env, shipped, "e2e-client", false)
}

// TestRingServerFiltered runs it on a control plane of its own with
// ShardedListAndWatch on: the API server filters the owners (by UID) and
// echoes the selector, which the binary reports.
func TestRingServerFiltered(t *testing.T) {
	gated, id := startShardedPlane(t)
	runRing(t, gated, id, "e2e-server", true)
}

// startShardedPlane starts a control plane of the test's own with
// ShardedListAndWatch on and the shipped RBAC applied, and returns it with
// the controller's identity there. It stops when the test ends.
func startShardedPlane(t testing.TB) (*kubetest.Env, *identity) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	gated, err := kubetest.Start(ctx, kubetest.WithLogf(log.Printf), kubetest.WithRBAC(),
		kubetest.WithAPIServerFlags("--feature-gates=ShardedListAndWatch=true"))
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := gated.Stop(); err != nil {
			t.Errorf("stop the gated control plane: %v", err)
		}
	})
	for _, m := range rbacManifests {
		_, err := gated.ApplyManifestFile(ctx, m)
		require.NoError(t, err, "apply %s", m)
	}
	token, err := gated.ServiceAccountToken(ctx, controllerNamespace, controllerAccount, tokenLifetime)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, gated.WriteKubeconfig(path, token))
	return gated, &identity{user: serviceaccount.MakeUsername(controllerNamespace, controllerAccount), token: token, kubeconfig: path}
}

// ringReplica is one process of the ring behind its own recording proxy.
type ringReplica struct {
	name    string
	proc    *controllerProcess
	proxy   *apiProxy
	metrics *metricsScraper
}

// runRing: owners ReplicaSets of 10 pods each are scaled up by one replica;
// two more join mid scale-up (1 → 3), one of them is killed with -9 mid
// scale-up (3 → 2), and every owner is then scaled to 12. Every owner must
// converge, no owner may ever have more pods than its spec (sampled on every
// pod event), no two replicas' writes on one owner may overlap, the killed
// replica's owners must be written again within the lease duration and 5 s of
// the kill, and the API server must have filtered (serverSide) or not.
func runRing(t testing.TB, e *kubetest.Env, id *identity, ring string, serverSide bool) {
	s := newScenarioOn(t, 30*time.Minute, e)
	owners := ringOwners(t)
	t.Cleanup(func() {
		err := s.client.CoordinationV1().Leases(controllerNamespace).DeleteCollection(context.Background(), metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: shard.RingLabel + "=" + ring})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete the ring's Leases: %v", err)
		}
	})
	pods := s.watchPods()
	start := func(name string) *ringReplica {
		r := &ringReplica{name: name, proxy: startProxyTo(t, name+"-proxy", e)}
		args := append(ringArgs(ring, name), ringThroughput...)
		r.proc = startController(t, name, s.controllerArgs(r.proxy.kubeconfig(t, id), args...)...)
		r.metrics = &metricsScraper{url: r.proc.metricsURL + "/metrics", client: &http.Client{Timeout: 5 * time.Second}}
		return r
	}
	gauge := func(r *ringReplica, name string) float64 {
		f := r.metrics.scrape(s.ctx, t)[name]
		require.NotNil(t, f, "%s: %s not served", r.name, name)
		return f.GetMetric()[0].GetGauge().GetValue()
	}

	r0 := start("replica-0")
	r0.proc.waitReady(s.ctx, t)
	s.waitFor("replica-0 to hold the whole space", func() (bool, string) {
		f := gauge(r0, "ctrlkit_shard_held_fraction")
		return f == 1, fmt.Sprintf("held %v", f)
	})

	names := make([]string, owners)
	for i := range names {
		names[i] = fmt.Sprintf("o%03d", i)
		pods.limit(names[i], 10)
	}
	parallel(t, names, func(name string) error { return s.createReplicaSetErr(name, 10) })
	total := func() int {
		n := 0
		for _, name := range names {
			n += pods.active(name)
		}
		return n
	}
	s.waitFor("the scale-up under way", func() (bool, string) {
		return total() >= owners, fmt.Sprintf("%d pods", total())
	})
	joinAt := time.Now()
	r1, r2 := start("replica-1"), start("replica-2")
	r1.proc.waitReady(s.ctx, t)
	r2.proc.waitReady(s.ctx, t)
	s.waitFor("three members sharing the space", func() (bool, string) {
		var held []float64
		for _, r := range []*ringReplica{r0, r1, r2} {
			held = append(held, gauge(r, "ctrlkit_shard_held_fraction"))
		}
		ok := true
		for _, h := range held {
			ok = ok && h > 0.2
		}
		return ok, fmt.Sprintf("held %v, %d pods", held, total())
	})
	t.Logf("1 → 3 replicas: shares settled %s after the join, at %d of %d pods", time.Since(joinAt).Round(time.Millisecond), total(), owners*10)
	s.waitFor("replica-2 to write", func() (bool, string) {
		n := len(r2.proxy.writesOf(controllerWrite))
		return n > 0, fmt.Sprintf("%d writes", n)
	})

	// What replica-2 holds when it dies: the claims in its Lease.
	lease, err := s.client.CoordinationV1().Leases(controllerNamespace).Get(s.ctx, shard.LeaseName(ring, r2.name), metav1.GetOptions{})
	require.NoError(t, err)
	deadShare, err := shard.ParseRanges(lease.Annotations[shard.ClaimsAnnotation])
	require.NoError(t, err)
	s.waitFor("the scale-up 40% done", func() (bool, string) {
		return total() >= owners*4, fmt.Sprintf("%d pods", total())
	})
	atKill := total()
	killedAt := r2.proc.kill9(t)
	require.Less(t, atKill, owners*10, "the kill must come mid scale-up")
	// The survivors take the dead replica's ranges over once its Lease has
	// expired: they hold the whole space between them again.
	survivors := []*ringReplica{r0, r1}
	s.waitFor("the survivors to hold the whole space", func() (bool, string) {
		h0, h1 := gauge(r0, "ctrlkit_shard_held_fraction"), gauge(r1, "ctrlkit_shard_held_fraction")
		return h0+h1 > 0.9999, fmt.Sprintf("held %v + %v", h0, h1)
	})
	takeover := time.Since(killedAt)
	t.Logf("kill -9 of replica-2 at %d of %d pods; the survivors held its share %s later (lease %s)", atKill, owners*10, takeover.Round(time.Millisecond), ringLease)
	require.LessOrEqual(t, takeover, ringLease+ringSchedulingSlack, "the dead replica's share was taken over too late")

	// Every owner now needs writes, the dead replica's among them.
	for _, name := range names {
		pods.limit(name, 12)
	}
	parallel(t, names, func(name string) error { return s.scaleReplicaSetErr(name, 12) })
	all := []*ringReplica{r0, r1, r2}
	waitRingSettled(t, s, ring, names, 12, pods, all)
	t.Logf("every owner converged %s after the kill", time.Since(killedAt).Round(time.Millisecond))

	// The dead replica's owners resume within the lease duration and 5 s.
	rsList, err := s.client.AppsV1().ReplicaSets(s.ns).List(s.ctx, metav1.ListOptions{})
	require.NoError(t, err)
	podOwner := pods.owners()
	var deadOwners []string
	var worst time.Duration
	earliest := time.Duration(1<<63 - 1)
	var resumed []time.Duration
	for i := range rsList.Items {
		rs := &rsList.Items[i]
		h, err := shard.HashObject(rs, shard.KeyUID)
		require.NoError(t, err)
		if !deadShare.Contains(h) {
			continue
		}
		deadOwners = append(deadOwners, rs.Name)
		first := time.Time{}
		for _, r := range survivors {
			for _, w := range r.proxy.writesOf(controllerWrite) {
				if w.at.After(killedAt) && writeOwner(w, podOwner) == rs.Name && (first.IsZero() || w.at.Before(first)) {
					first = w.at
				}
			}
		}
		require.False(t, first.IsZero(), "%s, replica-2's at the kill, was never written after it", rs.Name)
		worst = max(worst, first.Sub(killedAt))
		earliest = min(earliest, first.Sub(killedAt))
		resumed = append(resumed, first.Sub(killedAt))
	}
	require.NotEmpty(t, deadOwners, "replica-2 held no owner")
	slices.Sort(resumed)
	t.Logf("replica-2 held %.1f%% of the space and %d owners at the kill: the survivors' first write on them came %s (first owner), %s (median), %s (last) after the kill",
		100*deadShare.Fraction(), len(deadOwners), earliest.Round(time.Millisecond), resumed[len(resumed)/2].Round(time.Millisecond), worst.Round(time.Millisecond))
	// Its last owner may take two renew intervals more than the share: a
	// survivor judges the dead replica's Lease expired a full Lease duration
	// after it saw the last renewal, which it sees at its next list, up to
	// a renew interval late, on its own clock and never by the dead
	// replica's; and a survivor that takes part of the share up a step
	// after the other relists once more.
	require.LessOrEqual(t, worst, ringLease+2*ringRenew+ringSchedulingSlack, "work on the last of the dead replica's owners resumed too late")

	// No two replicas' writes on one owner overlap.
	switches, minGap := requireNoOverlap(t, all, podOwner)
	t.Logf("owner hand-overs between replicas seen in the writes: %d, shortest gap between two replicas' writes on one owner %s", switches, minGap)

	// The survivors hold every owner and pod between them, each its share,
	// filtered by the server or by themselves as the control plane allows.
	s.waitFor("the survivors' caches to hold every owner and pod once", func() (bool, string) {
		o0, o1 := gauge(r0, "ctrlkit_shard_owners"), gauge(r1, "ctrlkit_shard_owners")
		p0, p1 := gauge(r0, "ctrlkit_shard_pods"), gauge(r1, "ctrlkit_shard_pods")
		return int(o0+o1) == owners && int(p0+p1) == owners*12 && o0 > 0 && o1 > 0,
			fmt.Sprintf("owners %v+%v pods %v+%v", o0, o1, p0, p1)
	})
	wantFiltered := 0.0
	if serverSide {
		wantFiltered = 1
	}
	for _, r := range survivors {
		require.Equal(t, wantFiltered, gauge(r, "ctrlkit_shard_server_filtered"), "%s: server filtering", r.name)
		t.Logf("%s: holds %.3f of the space, %v owners, %v pods, %v hand-overs, %v restarts", r.name,
			gauge(r, "ctrlkit_shard_held_fraction"), gauge(r, "ctrlkit_shard_owners"), gauge(r, "ctrlkit_shard_pods"),
			counter(t, r.metrics.scrape(s.ctx, t), "ctrlkit_shard_handovers_total"),
			counter(t, r.metrics.scrape(s.ctx, t), "ctrlkit_shard_restarts_total"))
	}
	for _, name := range names {
		require.LessOrEqual(t, pods.maxSeen(name), 12, name)
	}

	for _, r := range survivors {
		r.proc.signal(t, syscall.SIGTERM)
	}
	for _, r := range survivors {
		require.Equal(t, 0, r.proc.wait(t, 40*time.Second), "%s: exit code after SIGTERM", r.name)
		requireNoForbidden(t, r.proc)
	}
	left, err := s.client.CoordinationV1().Leases(controllerNamespace).List(s.ctx, metav1.ListOptions{LabelSelector: shard.RingLabel + "=" + ring})
	require.NoError(t, err)
	var names2 []string
	for _, l := range left.Items {
		names2 = append(names2, l.Name)
	}
	require.Equal(t, []string{shard.LeaseName(ring, r2.name)}, names2, "the survivors delete their Leases on SIGTERM; the killed one's stays")
}

func counter(t testing.TB, families map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	f := families[name]
	require.NotNil(t, f, "%s not served", name)
	return f.GetMetric()[0].GetCounter().GetValue()
}

// writeOwner is the owner a controller write is about, pods resolved to
// their controller through the pod watch.
func writeOwner(w write, podOwner map[string]string) string {
	if w.owner != "" {
		return w.owner
	}
	return podOwner[w.pod]
}

// requireNoOverlap fails if two replicas ever had writes on one owner in
// flight at once, or one replica wrote to an owner while another's write on
// it had arrived but not been answered. It returns how many times an owner's
// writes passed from one replica to another, and the shortest time between
// one replica's last answered write and the other's first.
func requireNoOverlap(t testing.TB, replicas []*ringReplica, podOwner map[string]string) (switches int, minGap time.Duration) {
	t.Helper()
	type tagged struct {
		write
		replica string
	}
	byOwner := map[string][]tagged{}
	for _, r := range replicas {
		for _, w := range r.proxy.writesOf(controllerWrite) {
			if o := writeOwner(w, podOwner); o != "" {
				byOwner[o] = append(byOwner[o], tagged{w, r.name})
			}
		}
	}
	minGap = time.Duration(1<<63 - 1)
	var owners []string
	for o := range byOwner {
		owners = append(owners, o)
	}
	slices.Sort(owners)
	for _, o := range owners {
		ws := byOwner[o]
		slices.SortFunc(ws, func(a, b tagged) int { return a.at.Compare(b.at) })
		// The latest answer of each replica so far.
		lastDone := map[string]time.Time{}
		prev := ""
		for _, w := range ws {
			for other, done := range lastDone {
				if other != w.replica && done.After(w.at) {
					t.Errorf("%s: %s wrote at %s while %s's write on it was answered only at %s (%s %s)", o, w.replica,
						w.at.Format("15:04:05.000000"), other, done.Format("15:04:05.000000"), w.method, w.path)
				}
			}
			if prev != "" && prev != w.replica {
				switches++
				minGap = min(minGap, w.at.Sub(lastDone[prev]))
			}
			prev = w.replica
			if w.done.After(lastDone[w.replica]) {
				lastDone[w.replica] = w.done
			}
		}
	}
	return switches, minGap
}

// parallel runs fn for every name, a few at a time.
func parallel(t testing.TB, names []string, fn func(string) error) {
	t.Helper()
	var g errgroup.Group
	g.SetLimit(8)
	for _, n := range names {
		g.Go(func() error { return fn(n) })
	}
	require.NoError(t, g.Wait())
}

// createReplicaSetErr is createReplicaSet for a worker goroutine, which
// must not call FailNow.
func (s *scenario) createReplicaSetErr(name string, replicas int32) error {
	_, err := s.createReplicaSetIn(s.ns, name, replicas)
	return err
}

// scaleReplicaSetErr is scaleReplicaSet for a worker goroutine.
func (s *scenario) scaleReplicaSetErr(name string, replicas int32) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sc, err := s.client.AppsV1().ReplicaSets(s.ns).GetScale(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		sc.Spec.Replicas = replicas
		_, err = s.client.AppsV1().ReplicaSets(s.ns).UpdateScale(s.ctx, name, sc, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("scale %s: %w", name, err)
	}
	return nil
}

// ringSettleTimeout bounds how long the ring may take to bring every owner
// to its new spec. A healthy ring takes seconds; an owner lost by a
// hand-over would otherwise only show as the package's timeout, with no
// word of which owner or why.
const ringSettleTimeout = 3 * time.Minute

// waitRingSettled waits until every owner has observed its spec with want
// pods, and fails after ringSettleTimeout with a diagnosis of the owners
// still behind: their status, the member whose Lease claims them, and the
// last write any replica made on them.
func waitRingSettled(t testing.TB, s *scenario, ring string, names []string, want int32, pods *podWatch, replicas []*ringReplica) {
	t.Helper()
	deadline := time.Now().Add(ringSettleTimeout)
	for {
		list, err := s.client.AppsV1().ReplicaSets(s.ns).List(s.ctx, metav1.ListOptions{})
		require.NoError(t, err)
		var behind []*appsv1.ReplicaSet
		for i := range list.Items {
			rs := &list.Items[i]
			if !slices.Contains(names, rs.Name) {
				continue
			}
			if rs.Status.ObservedGeneration < rs.Generation || rs.Status.Replicas != want || pods.active(rs.Name) != int(want) {
				behind = append(behind, rs)
			}
		}
		if len(behind) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d owners not at %d pods %s after the scale:\n%s", len(behind), len(names), want, ringSettleTimeout,
				diagnoseRing(t, s, ring, behind, pods, replicas))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// diagnoseRing describes, for at most 20 owners, where each stands and who
// should be working on it.
func diagnoseRing(t testing.TB, s *scenario, ring string, behind []*appsv1.ReplicaSet, pods *podWatch, replicas []*ringReplica) string {
	leases, err := s.client.CoordinationV1().Leases(controllerNamespace).List(s.ctx, metav1.ListOptions{LabelSelector: shard.RingLabel + "=" + ring})
	require.NoError(t, err)
	podOwner := pods.owners()
	var b strings.Builder
	for _, l := range leases.Items {
		claims, _ := shard.ParseRanges(l.Annotations[shard.ClaimsAnnotation])
		fmt.Fprintf(&b, "  Lease %s: renewed %v, claims %.3f of the space\n", l.Name, l.Spec.RenewTime, claims.Fraction())
	}
	for i, rs := range behind {
		if i == 20 {
			fmt.Fprintf(&b, "  ... and %d more\n", len(behind)-i)
			break
		}
		h, err := shard.HashObject(rs, shard.KeyUID)
		require.NoError(t, err)
		var claimedBy []string
		for _, l := range leases.Items {
			if claims, err := shard.ParseRanges(l.Annotations[shard.ClaimsAnnotation]); err == nil && claims.Contains(h) {
				claimedBy = append(claimedBy, l.Name)
			}
		}
		last := "none"
		var lastAt time.Time
		for _, r := range replicas {
			for _, w := range r.proxy.writesOf(controllerWrite) {
				if writeOwner(w, podOwner) == rs.Name && w.at.After(lastAt) {
					lastAt = w.at
					last = fmt.Sprintf("%s %s %s (HTTP %d) at %s", r.name, w.method, w.path, w.status, w.at.Format(time.TimeOnly+".000"))
				}
			}
		}
		fmt.Fprintf(&b, "  %s: spec %d, status %d pods, generation %d observed %d, %d active pods; claimed by %v; last write: %s\n",
			rs.Name, ptr.Deref(rs.Spec.Replicas, 1), rs.Status.Replicas, rs.Generation, rs.Status.ObservedGeneration,
			pods.active(rs.Name), claimedBy, last)
	}
	return b.String()
}
