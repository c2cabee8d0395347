package podset

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/informers"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// simEnv is a controller with the real pod control over a simulated API,
// and informers that are never started: the test delivers the API's pods
// to the cache (catchUp), so a cache that lags is a test that waits. The
// read-your-writes guard is off: it would hold every sync after the first
// status write, as the owner cache never moves here, and it records only
// writes that succeeded anyway.
type simEnv struct {
	t       *testing.T
	ctx     context.Context
	cluster *simcluster.Cluster
	inf     informers.SharedInformerFactory
	c       *Controller[*appsv1.ReplicaSet]
	rs      *appsv1.ReplicaSet
	faults  atomic.Bool
}

func newSimEnv(t *testing.T, replicas int32, verb string, answer error) *simEnv {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	e := &simEnv{t: t, ctx: ctx, cluster: simcluster.New()}
	e.faults.Store(true)
	e.cluster.FailAfterApplying(verb, "pods", func(k8stesting.Action) error {
		if e.faults.Load() {
			return answer
		}
		return nil
	})
	client := e.cluster.Client()
	e.inf = informers.NewSharedInformerFactory(client, 0)
	rsInf := e.inf.Apps().V1().ReplicaSets().Informer()
	c, err := New(ctx, client, e.inf.Core().V1().Pods(), rsInf, Kind[*appsv1.ReplicaSet](rsKind{client: client, indexer: rsInf.GetIndexer()}),
		WithEventRecorder(record.NewFakeRecorder(1000)), WithReadYourWrites(nil))
	require.NoError(t, err)
	e.c = c
	e.rs = newRS("web", replicas, fooBar)
	e.rs.OwnerReferences = nil
	stored, err := client.AppsV1().ReplicaSets(e.rs.Namespace).Create(ctx, e.rs, metav1.CreateOptions{})
	require.NoError(t, err)
	e.rs = stored
	require.NoError(t, rsInf.GetIndexer().Add(stored))
	return e
}

func (e *simEnv) apiPods() []v1.Pod {
	e.t.Helper()
	list, err := e.cluster.Client().CoreV1().Pods(e.rs.Namespace).List(e.ctx, metav1.ListOptions{})
	require.NoError(e.t, err)
	return list.Items
}

// catchUp delivers the API's pods to the cache, as the informer would.
func (e *simEnv) catchUp() {
	e.t.Helper()
	store := e.inf.Core().V1().Pods().Informer().GetIndexer()
	live := map[string]bool{}
	for i := range e.apiPods() {
		pod := &e.apiPods()[i]
		live[pod.Name] = true
		if _, ok, _ := store.Get(pod); !ok {
			require.NoError(e.t, store.Add(pod))
			e.c.ObserveAdd(pod)
		}
	}
	for _, obj := range store.List() {
		if pod := obj.(*v1.Pod); !live[pod.Name] {
			require.NoError(e.t, store.Delete(pod))
			e.c.ObserveDelete(pod, false)
		}
	}
}

func (e *simEnv) sync() error {
	_, err := e.c.Reconcile(e.ctx, e.rs.Namespace+"/"+e.rs.Name)
	return err
}

// A pod create the API server stored but answered with a 504 or a
// ServerTimeout keeps its expectation, so syncs over a cache that has not
// seen the pod create no second one; once the server answers again the
// create is resolved by sending it again under its name, not by the TTL.
// The previous code kept the expectation only for its own deadline, and
// created 10 pods for 5 in 10 syncs.
func TestUnknownPodCreateKeepsExpectation(t *testing.T) {
	for name, answer := range map[string]error{
		"504":           apierrors.NewTimeoutError("request did not complete within 34s", 0),
		"ServerTimeout": apierrors.NewServerTimeout(schema.GroupResource{Resource: "pods"}, "create", 2),
	} {
		t.Run(name, func(t *testing.T) {
			e := newSimEnv(t, 5, "create", answer)
			for i := range 10 {
				_ = e.sync() // the errors are the faults'
				require.LessOrEqual(t, len(e.apiPods()), 5, "after sync %d with the cache held", i+1)
			}
			e.faults.Store(false)
			require.NoError(t, e.sync(), "the server answers again: the create is resolved")
			for range 20 {
				e.catchUp()
				require.NoError(t, e.sync())
				require.LessOrEqual(t, len(e.apiPods()), 5)
			}
			e.catchUp()
			assert.Len(t, e.apiPods(), 5)
			assert.True(t, e.c.Expectations().SatisfiedExpectations(expectations.OwnerKeyFor(e.rs)))
		})
	}
}

// A pod delete answered 504 after it was applied keeps its deletion
// expectation: no other pod is deleted in its place while the cache still
// shows it, and the delete is sent again at most once to resolve it.
func TestUnknownPodDeleteKeepsExpectation(t *testing.T) {
	e := newSimEnv(t, 4, "delete", apierrors.NewTimeoutError("request did not complete within 34s", 0))
	for i := range 8 {
		pod := newPod(names8[i], e.rs, v1.PodRunning, fooBar, true)
		require.NoError(t, e.cluster.Add(pod))
	}
	e.catchUp()
	for range 10 {
		_ = e.sync()
	}
	assert.Len(t, e.apiPods(), 4, "never below spec")
	deletes := 0
	for _, a := range e.cluster.Client().Actions() {
		if a.GetVerb() == "delete" && a.GetResource().Resource == "pods" {
			deletes++
		}
	}
	assert.LessOrEqual(t, deletes, 8, "each of the 4 deletes sent at most once more")
	e.faults.Store(false)
	e.catchUp()
	require.NoError(t, e.sync())
	assert.True(t, e.c.Expectations().SatisfiedExpectations(expectations.OwnerKeyFor(e.rs)))
}

var names8 = []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"}

// The names podset chooses for its pods skip the names the cache holds: a
// create answered AlreadyExists is taken for an earlier attempt of itself,
// so a name drawn twice would leave the owner expecting a pod that never
// comes. The random source is seeded to draw a cached name first.
func TestCreateSkipsNamesTheCacheHolds(t *testing.T) {
	e := newSimEnv(t, 2, "create", nil)
	e.faults.Store(false)
	utilrand.Seed(7)
	drawn := e.rs.Name + "-" + utilrand.String(5)
	foreign := newPod(drawn, e.rs, v1.PodRunning, map[string]string{"app": "other"}, true)
	foreign.OwnerReferences = nil
	require.NoError(t, e.cluster.Add(foreign))
	e.catchUp()

	utilrand.Seed(7)
	require.NoError(t, e.sync(), "no create may meet AlreadyExists")
	e.catchUp()
	controlled := 0
	for i := range e.apiPods() {
		if metav1.IsControlledBy(&e.apiPods()[i], e.rs) {
			controlled++
		}
	}
	assert.Equal(t, 2, controlled)
	assert.True(t, e.c.Expectations().SatisfiedExpectations(expectations.OwnerKeyFor(e.rs)))
}
