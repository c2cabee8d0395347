package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/workerset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/shardcr"
	"github.com/ctrlkit/ctrlkit/e2e/kubetest"
	"github.com/ctrlkit/ctrlkit/shard"
)

// The sharded scenario's sizes and timings.
const (
	shardOwners   = 40
	shardChildren = 3 // per owner at first; the scale-up adds 2
	shardRing     = "workersets"
	shardLease    = 5 * time.Second
	// shardQPS slows each manager's controller down, so that the second
	// scale-up is still under way when a manager is stopped.
	shardQPS = 25
)

// TestShardedWorkerSets runs ctrlruntime/examples/workerset (childset over
// childsetcr) sharded across two controller-runtime managers in the test
// process, against the real kube-apiserver: one shardcr.Member each in one
// ring (a Lease per manager), childsetcr.WithSharding, and each manager's
// cache narrowed to its share by shardcr.CacheFilter. The package's control
// plane runs without the ShardedListAndWatch feature gate, so the cache
// filter's client-side path is what runs here: every list and watch is
// answered in full and filtered in the manager.
//
// Each manager has a client of its own, whose transport records every
// write it sends. 40 WorkerSets of 3 Workers converge, each written by
// the manager whose share holds its UID's hash and by no other, both
// managers write, and each manager's cache holds its share of WorkerSets
// only. Then every WorkerSet is scaled to 5 and one manager is stopped mid
// scale-up: the survivor takes the whole hash space over (the takeover
// time is logged) and every WorkerSet converges. A watch of the namespace,
// replayed in resourceVersion order, shows no WorkerSet ever holding more
// live Workers than its spec.replicas at a raise: the survivor's informers
// relist the new share one after another, and its reconciles wait for all
// of them (shardcr.CacheFilter.Covers), or it would recreate the Workers
// of owners that reached its cache before their Workers did.
func TestShardedWorkerSets(t *testing.T) {
	runShardedWorkerSets(t, env, false)
}

// TestShardedWorkerSetsServerFiltered runs the scenario on a control plane
// of its own with ShardedListAndWatch on: the API server answers the
// managers' lists and watches of WorkerSets with their share alone (by UID
// hash). It echoes no selector for a custom resource, so the caches filter
// again on the client, and Workers are filtered there only: the server
// cannot hash a controller reference.
func TestShardedWorkerSetsServerFiltered(t *testing.T) {
	runShardedWorkerSets(t, startShardedPlane(t), true)
}

// startShardedPlane starts a control plane with ShardedListAndWatch on,
// stopped when the test ends.
func startShardedPlane(t *testing.T) *kubetest.Env {
	t.Helper()
	moduleDir, err := filepath.Abs(filepath.Join("..", "..", "e2e"))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	gated, err := kubetest.Start(ctx, kubetest.WithModuleDir(moduleDir), kubetest.WithLogf(t.Logf),
		kubetest.WithAPIServerFlags("--feature-gates=ShardedListAndWatch=true"))
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := gated.Stop(); err != nil {
			t.Errorf("stop the gated control plane: %v", err)
		}
	})
	t.Logf("gated control plane started in %s", gated.StartDuration.Round(time.Millisecond))
	return gated
}

// runShardedWorkerSets is the sharded scenario on the control plane e,
// whose API server filters shards (serverSide) or not.
func runShardedWorkerSets(t *testing.T, e *kubetest.Env, serverSide bool) {
	ctx, newConfig, dyn, ns := childsetScenarioOn(t, e, "sharded-", workerset.CRD)
	sets := dyn.Resource(workerSetsResource).Namespace(ns)
	workers := dyn.Resource(workersResource).Namespace(ns)
	sampler := &setSampler{ownerKind: "WorkerSet"}
	startSampler(t, dyn, ns, sampler, workerSetsResource, workersResource)

	writes := &writeLog{namespace: ns}
	a := startShardedManager(t, newConfig, writes, ns, "manager-a")
	b := startShardedManager(t, newConfig, writes, ns, "manager-b")
	defer a.stop()
	defer b.stop()

	// The ring splits the space before any owner exists, so that every
	// owner is written under the shares it settled at.
	require.NoError(t, waitFor(30*time.Second, func() (bool, error) {
		ha, hb := a.member.Held(), b.member.Held()
		return !ha.Empty() && !hb.Empty() && !ha.Overlaps(hb) && ha.Union(hb).Equal(shard.FullRanges()),
			fmt.Errorf("held %v and %v", ha, hb)
	}), "the ring never split the space between the managers")
	shareA, shareB := a.member.Held(), b.member.Held()
	changedA, cancelA := a.member.Subscribe()
	defer cancelA()
	changedB, cancelB := b.member.Subscribe()
	defer cancelB()
	t.Logf("shares: %s holds %.3f, %s holds %.3f", a.name, shareA.Fraction(), b.name, shareB.Fraction())
	// What the Leases claim is what the members hold.
	leases := kubernetes.NewForConfigOrDie(newConfig(nil)).CoordinationV1().Leases(ns)
	for _, m := range []*shardedManager{a, b} {
		require.NoError(t, waitFor(10*time.Second, func() (bool, error) {
			lease, err := leases.Get(ctx, shard.LeaseName(shardRing, m.name), metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			claims, err := shard.ParseRanges(lease.Annotations[shard.ClaimsAnnotation])
			if err != nil {
				return false, err
			}
			return claims.Equal(m.member.Held()), fmt.Errorf("lease claims %v, member holds %v", claims, m.member.Held())
		}), "the Lease of %s", m.name)
	}

	names := make([]string, shardOwners)
	uids := map[string]types.UID{}
	for i := range names {
		names[i] = fmt.Sprintf("ws-%02d", i)
		set, err := sets.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": workerset.GroupVersion.String(), "kind": "WorkerSet",
			"metadata": map[string]any{"name": names[i]},
			"spec": map[string]any{
				"replicas": int64(shardChildren),
				"selector": map[string]any{"matchLabels": map[string]any{"pool": names[i]}},
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"pool": names[i]}},
					"spec":     map[string]any{"machineClass": "m5.large", "image": "worker:1"},
				},
			},
		}}, metav1.CreateOptions{})
		require.NoError(t, err)
		uids[names[i]] = set.GetUID()
	}
	if serverSide {
		// The server answers a list of one share with that share alone.
		// For a custom resource it does not echo the selector (its
		// unstructured list has no ShardInfo), so the managers' caches
		// filter its answers again, which changes nothing.
		sel, err := shareA.Selector(shard.KeyUID)
		require.NoError(t, err)
		probe, err := sets.List(ctx, metav1.ListOptions{ShardSelector: sel})
		require.NoError(t, err)
		inA := 0
		for _, uid := range uids {
			if shareA.Contains(shard.Hash(string(uid))) {
				inA++
			}
		}
		for _, item := range probe.Items {
			require.True(t, shareA.Contains(shard.Hash(string(item.GetUID()))), "the server answered %s, outside the share", item.GetName())
		}
		require.Len(t, probe.Items, inA, "the server's answer for the share of %s", a.name)
		echoed, _, _ := unstructured.NestedString(probe.Object, "metadata", "shardInfo", "selector")
		t.Logf("the API server filtered the WorkerSets: %d of %d for the share of %s (selector echoed: %t)", len(probe.Items), shardOwners, a.name, echoed != "")
	}
	start := time.Now()
	require.NoError(t, waitFor(time.Minute, func() (bool, error) {
		return allSettled(ctx, workers, uids, shardChildren)
	}), "the WorkerSets never settled at %d Workers", shardChildren)
	t.Logf("%d WorkerSets 0 -> %d Workers in %s", shardOwners, shardChildren, time.Since(start).Round(time.Millisecond))
	// Each cache holds its share of the owners, and no other.
	for _, m := range []*shardedManager{a, b} {
		require.NoError(t, waitFor(10*time.Second, func() (bool, error) {
			var cached workerset.WorkerSetList
			if err := m.cache.List(ctx, &cached, client.InNamespace(ns)); err != nil {
				return false, err
			}
			held := 0
			for _, name := range names {
				if m.member.Holds(shard.Hash(string(uids[name]))) {
					held++
				}
			}
			for _, set := range cached.Items {
				if !m.member.Holds(shard.Hash(string(set.UID))) {
					return false, fmt.Errorf("%s caches %s, held elsewhere", m.name, set.Name)
				}
			}
			return len(cached.Items) == held, fmt.Errorf("%s caches %d WorkerSets, holds %d", m.name, len(cached.Items), held)
		}), "the cache of %s", m.name)
	}

	// Scale every owner up and stop manager b once the scale-up is under
	// way. Until then, the shares must not have moved.
	for _, name := range names {
		require.NoError(t, scaleOwner(ctx, sets, name, shardChildren+2))
	}
	target := shardOwners * (shardChildren + 2)
	var atStop int
	require.NoError(t, waitFor(time.Minute, func() (bool, error) {
		atStop = liveTotal(sampler)
		return atStop >= shardOwners*shardChildren+10, fmt.Errorf("%d live Workers", atStop)
	}), "the scale-up never started")
	stopAt := time.Now()
	select {
	case <-changedA:
		t.Fatalf("the share of %s moved before the stop: %v, was %v", a.name, a.member.Held(), shareA)
	case <-changedB:
		t.Fatalf("the share of %s moved before the stop: %v, was %v", b.name, b.member.Held(), shareB)
	default:
	}

	// The survivor's takeover, timed from the stop by a poller of its
	// share.
	tookOver := make(chan time.Time, 1)
	pollCtx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	go func() {
		for {
			if a.member.Held().Equal(shard.FullRanges()) {
				tookOver <- time.Now()
				return
			}
			select {
			case <-pollCtx.Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	b.stop()
	stoppedAt := time.Now()
	require.Less(t, atStop, target, "the stop must come mid scale-up")
	var takeover time.Duration
	select {
	case at := <-tookOver:
		takeover = at.Sub(stopAt)
	case <-time.After(2 * shardLease):
		t.Fatalf("%s never took the whole space over (holds %v)", a.name, a.member.Held())
	}
	t.Logf("%s stopped at %d of %d live Workers (its manager returned after %s); %s held the whole space %s after the stop (lease %s)",
		b.name, atStop, target, stoppedAt.Sub(stopAt).Round(time.Millisecond), a.name, takeover.Round(time.Millisecond), shardLease)
	require.NoError(t, waitFor(time.Minute, func() (bool, error) {
		return allSettled(ctx, workers, uids, shardChildren+2)
	}), "the WorkerSets never settled at %d Workers after the stop", shardChildren+2)
	t.Logf("every WorkerSet converged at %d Workers %s after the stop", shardChildren+2, time.Since(stopAt).Round(time.Millisecond))

	// Who wrote what: while both held their shares, each owner by its
	// holder only; after the stop, nothing by the stopped manager.
	writers := map[string]map[string]int{} // owner -> manager -> writes
	perManager := map[string]int{}
	for _, w := range writes.all() {
		if w.owner == "" {
			t.Errorf("a write of %s that names no WorkerSet: %s %s", w.manager, w.method, w.path)
			continue
		}
		if w.manager == b.name && w.at.After(stoppedAt) {
			t.Errorf("%s wrote after its manager stopped: %s %s", b.name, w.method, w.path)
		}
		if !w.at.Before(stopAt) {
			continue
		}
		if writers[w.owner] == nil {
			writers[w.owner] = map[string]int{}
		}
		writers[w.owner][w.manager]++
		perManager[w.manager]++
	}
	owned := map[string]int{}
	for _, name := range names {
		h := shard.Hash(string(uids[name]))
		holder := a.name
		if shareB.Contains(h) {
			holder = b.name
		}
		owned[holder]++
		by := writers[name]
		require.NotZero(t, by[holder], "%s was never written by its holder %s: %v", name, holder, by)
		require.Len(t, by, 1, "%s, held by %s, was written by %v", name, holder, by)
	}
	t.Logf("before the stop: WorkerSets held %v, writes %v", owned, perManager)
	require.NotZero(t, perManager[a.name], "%s wrote nothing: the ring did not split the work", a.name)
	require.NotZero(t, perManager[b.name], "%s wrote nothing: the ring did not split the work", b.name)

	rep := sampler.replay()
	t.Logf("sharded workerset: Workers created %d, max live %d, max over-creation %d, samples %d (of %d events)",
		len(rep.Controlled), rep.MaxLive, rep.MaxExcess, rep.Samples, rep.EventsTotal)
	if len(rep.Violations) > 0 {
		// Who wrote the owners over their count, and when, for the failure
		// to be read from the log.
		for _, w := range writes.all() {
			for _, v := range rep.Violations {
				if strings.Contains(v, " "+w.owner+"-") || strings.Contains(v, " "+w.owner+" ") {
					t.Logf("write to %s: %s %s %s at stop%+v", w.owner, w.manager, w.method, w.path, w.at.Sub(stopAt).Round(time.Millisecond))
					break
				}
			}
		}
	}
	require.Empty(t, rep.Violations, "over-creation at sampled instants")
	require.Zero(t, rep.MaxExcess)
	require.Equal(t, shardChildren+2, rep.MaxLive)
	require.GreaterOrEqual(t, rep.Samples, target)
}

// shardedManager is one manager of the sharded scenario: its ring member
// and how to stop it.
type shardedManager struct {
	name   string
	member *shardcr.Member
	cache  client.Reader
	once   sync.Once
	halt   func()
}

// stop stops the manager (its member leaves the ring); again is a no-op.
func (m *shardedManager) stop() { m.once.Do(m.halt) }

// startShardedManager runs a manager named name with the sharded WorkerSet
// controller and its ring member, on a client of its own whose writes
// writes records as name's.
func startShardedManager(t *testing.T, newConfig func(func(http.RoundTripper) http.RoundTripper) *rest.Config, writes *writeLog, ns, name string) *shardedManager {
	t.Helper()
	cfg := newConfig(writes.recorder(name))
	cfg.UserAgent = name
	member, err := shardcr.NewMember(kubernetes.NewForConfigOrDie(cfg).CoordinationV1(), ns, shardRing, name,
		shard.WithLeaseDuration(shardLease), shard.WithRenewInterval(time.Second),
		shard.WithSafetyMargin(time.Second), shard.WithWriteTimeout(2*time.Second))
	require.NoError(t, err)
	sharding := shardcr.New(member, shard.KeyUID)
	scheme := runtime.NewScheme()
	require.NoError(t, workerset.AddToScheme(scheme))
	filter := shardcr.NewCacheFilter(sharding, scheme, nil).Owners(&workerset.WorkerSet{}).Children(&workerset.Worker{})
	// The controller's own rate limit; the member's client above keeps
	// the environment's, so its renewals never wait behind the work.
	ctrlCfg := rest.CopyConfig(cfg)
	ctrlCfg.QPS, ctrlCfg.Burst = shardQPS, shardQPS
	m := &shardedManager{name: name, member: member}
	m.halt = startChildsetManager(t, ctrlCfg, "0", func(mgr ctrl.Manager) error {
		m.cache = mgr.GetCache()
		if err := mgr.Add(member); err != nil {
			return err
		}
		_, err := workerset.SetupWithManager(mgr, childsetQueue, childsetcr.WithSharding(sharding))
		return err
	}, func(o *ctrl.Options) { o.Cache.NewInformer = filter.NewInformer })
	return m
}

// allSettled reports whether every owner in uids controls exactly want
// live objects of res.
func allSettled(ctx context.Context, res interface {
	List(context.Context, metav1.ListOptions) (*unstructured.UnstructuredList, error)
}, uids map[string]types.UID, want int) (bool, error) {
	list, err := res.List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	count := map[types.UID]int{}
	for _, item := range list.Items {
		if ref := metav1.GetControllerOf(&item); ref != nil && item.GetDeletionTimestamp() == nil {
			count[ref.UID]++
		}
	}
	for name, uid := range uids {
		if count[uid] != want {
			return false, fmt.Errorf("%s has %d live children, want %d", name, count[uid], want)
		}
	}
	return true, nil
}

// liveTotal is the number of live controlled children the sampler's events
// show now.
func liveTotal(s *setSampler) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	live := map[string]bool{}
	for _, ev := range s.events {
		if !ev.owner {
			live[ev.name] = ev.live && ev.uid != ""
		}
	}
	n := 0
	for _, l := range live {
		if l {
			n++
		}
	}
	return n
}

// writeLog records the writes (every request but GET, LIST and WATCH) that
// managers send to a namespace, each with the WorkerSet it is for: the
// one named in the path, or the one whose name prefixes the child's or
// revision's name (generated as <owner>-...), read from the body of a
// create. Lease writes (the ring's) and events (recorded asynchronously,
// outside any reconcile) are left out.
type writeLog struct {
	namespace string

	mu     sync.Mutex
	writes []apiWrite
}

type apiWrite struct {
	at      time.Time
	manager string
	method  string
	path    string
	owner   string // the WorkerSet's name; "" if none could be told
}

// recorder is the transport wrapper of manager's client.
func (l *writeLog) recorder(manager string) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method != http.MethodGet {
				l.record(manager, req)
			}
			return next.RoundTrip(req)
		})
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func (l *writeLog) record(manager string, req *http.Request) {
	// .../namespaces/<ns>/<resource>[/<name>[/<subresource>]]
	_, rest, ok := strings.Cut(req.URL.Path, "/namespaces/"+l.namespace+"/")
	if !ok {
		return
	}
	parts := strings.Split(rest, "/")
	resource, name := parts[0], ""
	if len(parts) > 1 {
		name = parts[1]
	}
	switch resource {
	case "leases", "events":
		return
	}
	if name == "" && req.GetBody != nil {
		// A create names its object in the body.
		if body, err := req.GetBody(); err == nil {
			var obj struct {
				Metadata struct {
					Name         string `json:"name"`
					GenerateName string `json:"generateName"`
				} `json:"metadata"`
			}
			data, _ := io.ReadAll(body)
			_ = body.Close()
			if json.NewDecoder(bytes.NewReader(data)).Decode(&obj) == nil {
				name = obj.Metadata.Name + obj.Metadata.GenerateName
			}
		}
	}
	owner := ""
	switch {
	case resource == "workersets":
		owner = name
	case strings.HasPrefix(name, "ws-") && len(name) >= len("ws-00-"):
		owner = name[:len("ws-00")]
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes = append(l.writes, apiWrite{at: time.Now(), manager: manager, method: req.Method, path: req.URL.Path, owner: owner})
}

func (l *writeLog) all() []apiWrite {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]apiWrite(nil), l.writes...)
}
