package shardcr_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/podsetcr"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/shardcr"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/simkit"
	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/shard"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// rsSpec: a ReplicaSet owns pods, through childset. It records which
// replica reconciled which owner: the core builds the child template once
// per reconcile of an owner it found.
type rsSpec struct {
	replica string
	seen    *reconciles
}

func (rsSpec) GroupVersionKind() schema.GroupVersionKind {
	return appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
}
func (rsSpec) Replicas(rs *appsv1.ReplicaSet) int32 { return ptr.Deref(rs.Spec.Replicas, 1) }
func (rsSpec) Selector(rs *appsv1.ReplicaSet) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(rs.Spec.Selector)
}
func (s rsSpec) NewChild(rs *appsv1.ReplicaSet) (*corev1.Pod, error) {
	s.seen.add(rs.Name, s.replica)
	return &corev1.Pod{ObjectMeta: *rs.Spec.Template.ObjectMeta.DeepCopy(), Spec: *rs.Spec.Template.Spec.DeepCopy()}, nil
}

type podKind struct{}

func (podKind) Ready(*corev1.Pod) bool { return false }

// reconciles counts, per owner name, the reconciles of each replica.
type reconciles struct {
	mu      sync.Mutex
	byOwner map[string]map[string]int
}

func (c *reconciles) add(owner, replica string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byOwner[owner] == nil {
		c.byOwner[owner] = map[string]int{}
	}
	c.byOwner[owner][replica]++
}

// replicasOf returns, per owner, the replicas that reconciled it.
func (c *reconciles) replicasOf() map[string][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]string{}
	for owner, by := range c.byOwner {
		for r := range by {
			out[owner] = append(out[owner], r)
		}
		slices.Sort(out[owner])
	}
	return out
}

// replica is one sharded controller process: its ring member, its cache
// filtered to its share, and its manager.
type replica struct {
	name     string
	member   *shardcr.Member
	sharding *shardcr.Sharding
	kit      *simkit.Kit
	mgr      manager.Manager
}

// testControllerOptions runs the test's controllers on ctrlkit's queue:
// controller-runtime v0.24.1's priority queue can deadlock when it shuts
// down while handing a ready item to a worker that already left (its send
// on the get channel holds the queue's lock), which stopping one replica
// mid-run hits now and then.
func testControllerOptions() controller.Options {
	return controller.Options{SkipNameValidation: ptr.To(true), NewQueue: ctrlruntime.NewQueue}
}

// host registers a sharded set controller of ReplicaSets over pods.
type host func(mgr manager.Manager, replica string, s *shardcr.Sharding, seen *reconciles) error

func childsetHost(mgr manager.Manager, replica string, s *shardcr.Sharding, seen *reconciles) error {
	_, err := childsetcr.SetupWithManager[*appsv1.ReplicaSet, *corev1.Pod](mgr, rsSpec{replica: replica, seen: seen}, podKind{},
		childsetcr.WithSharding(s),
		childsetcr.WithControllerOptions(testControllerOptions()))
	return err
}

func podsetHost(mgr manager.Manager, replica string, s *shardcr.Sharding, seen *reconciles) error {
	_, err := podsetcr.SetupWithManager[*appsv1.ReplicaSet](mgr, rsDescriber{replica: replica, seen: seen},
		podsetcr.WithSharding(s),
		podsetcr.WithControllerOptions(testControllerOptions()))
	return err
}

// rsDescriber is podsetcr's adapter for ReplicaSets. podset reads the
// template once per sync of an owner it found, which it records.
type rsDescriber struct {
	replica string
	seen    *reconciles
}

func (rsDescriber) GroupVersionKind() schema.GroupVersionKind {
	return appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
}
func (rsDescriber) Replicas(rs *appsv1.ReplicaSet) int32 { return ptr.Deref(rs.Spec.Replicas, 1) }
func (rsDescriber) Selector(rs *appsv1.ReplicaSet) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(rs.Spec.Selector)
}
func (d rsDescriber) Template(rs *appsv1.ReplicaSet) *corev1.PodTemplateSpec {
	d.seen.add(rs.Name, d.replica)
	return &rs.Spec.Template
}
func (rsDescriber) MinReadySeconds(rs *appsv1.ReplicaSet) int32 { return rs.Spec.MinReadySeconds }
func (rsDescriber) SetStatus(rs *appsv1.ReplicaSet, in podset.StatusInput) {
	rs.Status.Replicas = in.Counts().Replicas
}

func newReplica(t *testing.T, name string, scheme *runtime.Scheme, cluster *simcluster.Cluster, seen *reconciles, filterCache bool, setup host) *replica {
	t.Helper()
	r := &replica{name: name}
	var err error
	r.member, err = shardcr.NewMember(cluster.Client().CoordinationV1(), "kube-system", "replicasets", name,
		shard.WithLeaseDuration(3*time.Second), shard.WithSafetyMargin(time.Second),
		shard.WithRenewInterval(100*time.Millisecond), shard.WithWriteTimeout(500*time.Millisecond))
	require.NoError(t, err)
	r.sharding = shardcr.New(r.member, shard.KeyUID)
	opts := []simkit.Option{simkit.WithCluster(cluster)}
	if filterCache {
		filter := shardcr.NewCacheFilter(r.sharding, scheme, nil).Owners(&appsv1.ReplicaSet{}).Children(&corev1.Pod{})
		opts = append(opts, simkit.WithNewInformer(filter.NewInformer))
	}
	r.kit, err = simkit.New(scheme, opts...)
	require.NoError(t, err)
	r.mgr, err = r.kit.NewManager(manager.Options{})
	require.NoError(t, err)
	require.NoError(t, r.mgr.Add(r.member))
	require.NoError(t, setup(r.mgr, name, r.sharding, seen))
	return r
}

// Two replicas of a sharded set controller (childsetcr, podsetcr) in two
// managers over one simulated cluster: each owner is reconciled by the
// replica that holds it and by no other, and every owner converges to its
// replicas; with the cache filter, each replica's cache holds only its
// share, without it the predicates and the fenced reconciler alone divide
// the work.
func TestTwoShardedReplicasConverge(t *testing.T) {
	for _, h := range []struct {
		name  string
		setup host
	}{{"childsetcr", childsetHost}, {"podsetcr", podsetHost}} {
		for _, filterCache := range []bool{true, false} {
			t.Run(h.name+map[bool]string{true: ", cache filtered", false: ", events filtered"}[filterCache], func(t *testing.T) {
				twoShardedReplicas(t, filterCache, h.setup)
			})
		}
	}
}

func twoShardedReplicas(t *testing.T, filterCache bool, setup host) {
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	seen := &reconciles{byOwner: map[string]map[string]int{}}
	cluster := simcluster.New(simcluster.WithScheme(scheme))
	replicas := []*replica{newReplica(t, "replica-a", scheme, cluster, seen, filterCache, setup), newReplica(t, "replica-b", scheme, cluster, seen, filterCache, setup)}

	ctx := context.Background()
	stops := make([]func(), len(replicas))
	for i, r := range replicas {
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			assert.NoError(t, r.mgr.Start(rctx))
		}()
		stops[i] = func() { cancel(); <-done }
	}
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()

	a, b := replicas[0].member, replicas[1].member
	require.Eventually(t, func() bool {
		ha, hb := a.Held(), b.Held()
		return !ha.Empty() && !hb.Empty() && !ha.Overlaps(hb) && ha.Union(hb).Equal(shard.FullRanges())
	}, 20*time.Second, 10*time.Millisecond, "the ring never split the space")

	const owners, perOwner = 12, 2
	api := replicas[0].kit.APIReader()
	for i := range owners {
		app := fmt.Sprintf("app-%d", i)
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("rs-%d", i)},
			Spec: appsv1.ReplicaSetSpec{
				Replicas: ptr.To[int32](perOwner),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
				},
			},
		}
		require.NoError(t, api.Create(ctx, rs))
	}

	// Every owner converges.
	childrenOf := func() map[string]int {
		var pods corev1.PodList
		require.NoError(t, api.List(ctx, &pods))
		out := map[string]int{}
		for _, p := range pods.Items {
			if ref := metav1.GetControllerOf(&p); ref != nil {
				out[ref.Name]++
			}
		}
		return out
	}
	require.Eventually(t, func() bool {
		got := childrenOf()
		for i := range owners {
			if got[fmt.Sprintf("rs-%d", i)] != perOwner {
				return false
			}
		}
		return true
	}, 30*time.Second, 10*time.Millisecond, "owners did not converge")

	// Each owner was reconciled by its holder only.
	var all appsv1.ReplicaSetList
	require.NoError(t, api.List(ctx, &all))
	byOwner := seen.replicasOf()
	perReplica := map[string]int{}
	for _, rs := range all.Items {
		holder := "replica-a"
		if b.Holds(shard.Hash(string(rs.UID))) {
			holder = "replica-b"
		}
		assert.Equal(t, []string{holder}, byOwner[rs.Name], "replicas that reconciled %s", rs.Name)
		perReplica[holder]++
	}
	t.Logf("owners per replica: %v", perReplica)

	// Each cache holds its share only: the owners it holds and their pods.
	for _, r := range replicas {
		if !filterCache {
			break
		}
		require.Eventually(t, func() bool {
			var cached appsv1.ReplicaSetList
			var pods corev1.PodList
			if r.mgr.GetClient().List(ctx, &cached) != nil || r.mgr.GetClient().List(ctx, &pods) != nil {
				return false
			}
			for _, rs := range cached.Items {
				if !r.sharding.HoldsOwner(&rs) {
					return false
				}
			}
			for _, p := range pods.Items {
				if !r.sharding.KeepsChild(&p) {
					return false
				}
			}
			return len(cached.Items) == perReplica[r.name] && len(pods.Items) == perOwner*perReplica[r.name]
		}, 10*time.Second, 10*time.Millisecond, "the cache of %s is not its share", r.name)
	}

	// Replica b stops: it leaves the ring, a takes its owners over, and a
	// scale-up of every owner converges through a alone.
	// The scale-up is written before a holds b's owners, so a drops
	// their events: only the resync of its new share brings them.
	stops[1]()
	if a.Held().Equal(shard.FullRanges()) {
		t.Log("replica a took over before the scale-up; the resync is not what brings b's owners this time")
	}
	for i := range owners {
		key := client.ObjectKey{Namespace: "ns", Name: fmt.Sprintf("rs-%d", i)}
		require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var rs appsv1.ReplicaSet
			if err := api.Get(ctx, key, &rs); err != nil {
				return err
			}
			rs.Spec.Replicas = ptr.To[int32](perOwner + 1)
			return api.Update(ctx, &rs)
		}))
	}
	require.Eventually(t, func() bool { return a.Held().Equal(shard.FullRanges()) }, 20*time.Second, 10*time.Millisecond,
		"replica a never took the whole space over")
	require.Eventually(t, func() bool {
		got := childrenOf()
		for i := range owners {
			if got[fmt.Sprintf("rs-%d", i)] != perOwner+1 {
				return false
			}
		}
		return true
	}, 30*time.Second, 10*time.Millisecond, "owners did not converge after the hand-over")
}
