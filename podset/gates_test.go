package podset

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/podranking"
)

// gateSwitch is a feature-gate lookup whose one gate can be flipped while
// the controller runs; every other gate keeps upstream's default.
type gateSwitch struct {
	name string
	on   atomic.Bool
}

func newGateSwitch(name string, on bool) *gateSwitch {
	g := &gateSwitch{name: name}
	g.on.Store(on)
	return g
}

func (g *gateSwitch) enabled(feature string) bool {
	if feature == g.name {
		return g.on.Load()
	}
	return DefaultFeatureGates(feature)
}

func TestDefaultFeatureGatesAreUpstreams(t *testing.T) {
	for _, g := range []string{PodDeletionCost, LogarithmicScaleDown, DeploymentReplicaSetTerminatingReplicas, StaleControllerConsistencyReplicaSet} {
		assert.True(t, DefaultFeatureGates(g), g)
	}
	assert.False(t, DefaultFeatureGates("SomethingElse"))
}

// readyPod is a running pod of rs, ready since readyFor ago.
func readyPod(name string, rs *appsv1.ReplicaSet, readyFor time.Duration, uid string) *v1.Pod {
	p := newPod(name, rs, v1.PodRunning, fooBar, true)
	p.UID = types.UID("uid-" + uid)
	p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(time.Now().Add(-readyFor))
	return p
}

// scaleDownVictim syncs a ReplicaSet of 1 over pods and returns the pod it
// deleted.
func scaleDownVictim(t *testing.T, gates func(string) bool, pods ...*v1.Pod) string {
	t.Helper()
	rs := newRS("foobar", 1, fooBar)
	for _, p := range pods {
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}
	}
	e := newEnv(t, []runtime.Object{rs}, WithFeatureGates(gates))
	e.addOwner(rs)
	e.addPods(pods...)
	require.NoError(t, e.sync(rs))
	require.Len(t, e.pc.DeletePodName, 1)
	return e.pc.DeletePodName[0]
}

func TestGatePodDeletionCost(t *testing.T) {
	pods := func() []*v1.Pod {
		recent := readyPod("recent", newRS("foobar", 1, fooBar), time.Second, "a")
		cheap := readyPod("cheap", newRS("foobar", 1, fooBar), time.Hour, "b")
		cheap.Annotations = map[string]string{podranking.DeletionCostAnnotation: "-100"}
		return []*v1.Pod{recent, cheap}
	}
	g := newGateSwitch(PodDeletionCost, true)
	assert.Equal(t, "cheap", scaleDownVictim(t, g.enabled, pods()...), "on: the lower deletion cost goes first")
	g.on.Store(false)
	assert.Equal(t, "recent", scaleDownVictim(t, g.enabled, pods()...), "off: the annotation is ignored")
}

// Upstream v1.37's registry no longer knows LogarithmicScaleDown and panics
// when asked about it; a caller handing that lookup over must get the
// always-on logarithmic answer, never the panic.
func TestLogarithmicScaleDownIsNeverAsked(t *testing.T) {
	// Ready 20 s and 21 s ago: the same power-of-two bucket, so the ranks
	// tie and the UID decides; plain times would pick the newer pod.
	pods := func() []*v1.Pod {
		rs := newRS("foobar", 1, fooBar)
		return []*v1.Pod{readyPod("newer", rs, 20*time.Second, "b"), readyPod("older", rs, 21*time.Second, "a")}
	}
	registry137 := func(feature string) bool {
		if feature == LogarithmicScaleDown {
			panic("feature \"LogarithmicScaleDown\" is not registered")
		}
		return DefaultFeatureGates(feature)
	}
	got := scaleDownVictim(t, registry137, pods()...)
	want := podranking.NewSelector().PodsToDelete(pods(), nil, 1)[0].Name
	assert.Equal(t, want, got, "podranking's logarithmic answer")
	assert.Equal(t, "older", got, "the bucketed tie is broken by UID, not by the exact time")
}

// statusTerminating returns status.terminatingReplicas of the last status
// update, and whether there was one.
func statusTerminating(t *testing.T, e *env) (*int32, bool) {
	t.Helper()
	actions := e.client.Actions()
	for i := len(actions) - 1; i >= 0; i-- {
		if u, ok := actions[i].(k8stesting.UpdateAction); ok && u.GetSubresource() == "status" {
			return u.GetObject().(*appsv1.ReplicaSet).Status.TerminatingReplicas, true
		}
	}
	return nil, false
}

func TestGateTerminatingReplicas(t *testing.T) {
	for _, on := range []bool{true, false} {
		rs := newRS("foobar", 1, fooBar)
		g := newGateSwitch(DeploymentReplicaSetTerminatingReplicas, on)
		e := newEnv(t, []runtime.Object{rs}, WithFeatureGates(g.enabled))
		e.addOwner(rs)
		running := newPod("running", rs, v1.PodRunning, fooBar, true)
		going := newPod("going", rs, v1.PodRunning, fooBar, true)
		going.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		e.addPods(running, going)
		require.NoError(t, e.sync(rs))
		got, ok := statusTerminating(t, e)
		require.True(t, ok, "status written")
		if on {
			require.NotNil(t, got)
			assert.Equal(t, int32(1), *got)
		} else {
			assert.Nil(t, got, "off: terminatingReplicas is not written")
		}
	}
}

// fakeStore is an informer store whose applied resource version the test
// sets.
type fakeStore struct{ rv atomic.Value }

func (s *fakeStore) LastStoreSyncResourceVersion() string { return s.rv.Load().(string) }

// guardedEnv returns an env whose read-your-writes guard watches a fake
// owner store, and that store.
func guardedEnv(t *testing.T, rs *appsv1.ReplicaSet, opts ...Option) (*env, *fakeStore) {
	store := &fakeStore{}
	store.rv.Store("1")
	// Installed whenever the guard is on, also where the informer stores
	// report no version (client-go before v0.36) and New would build none.
	if cfg := newConfig(opts); !cfg.guardSet {
		owners := schema.GroupResource{Group: "apps", Resource: "replicasets"}
		opts = append(opts, WithReadYourWrites(consistency.NewGuard(consistency.WithStore(owners, store))))
	}
	e := newEnv(t, []runtime.Object{rs}, opts...)
	e.addOwner(rs)
	return e, store
}

// TestReadYourWrites: after the controller wrote the owner's status at
// resource version N, a sync on an owner cache that has applied less than N
// is deferred (no status write, no pod change) and polled again, without
// feeding the failure backoff; once the cache reaches N it runs.
func TestReadYourWrites(t *testing.T) {
	rs := newRS("foobar", 0, fooBar)
	rs.ResourceVersion = "18"
	e, store := guardedEnv(t, rs, WithStaleCachePoll(20*time.Millisecond))
	require.NoError(t, e.sync(rs)) // writes the status: the fake keeps RV 18
	writes := len(e.client.Actions())
	require.Positive(t, writes, "the first sync wrote the status")
	key := "default/foobar"

	e.queue().Add(key)
	require.True(t, e.c.ProcessNextWorkItem(e.ctx))
	assert.Len(t, e.client.Actions(), writes, "deferred: nothing written")
	assert.Zero(t, e.queue().NumRequeues(key), "a stale cache is not a failure")
	_, waiting := e.queue().Deadline(key)
	assert.True(t, waiting, "polled again")
	err := e.syncKey(key)
	require.ErrorIs(t, err, consistency.ErrStaleCache)

	store.rv.Store("18")
	require.Eventually(t, func() bool { return e.queue().Len() == 1 }, 5*time.Second, time.Millisecond)
	require.True(t, e.c.ProcessNextWorkItem(e.ctx))
	assert.Zero(t, e.queue().NumRequeues(key), "ran and succeeded")
	assert.Greater(t, len(e.client.Actions()), writes, "the sync ran")

	// Turned off, the guard never defers.
	rs2 := newRS("foobar", 0, fooBar)
	rs2.ResourceVersion = "18"
	off, _ := guardedEnv(t, rs2, WithReadYourWrites(nil))
	require.NoError(t, off.sync(rs2))
	require.NoError(t, off.sync(rs2))
}

// TestReadYourWritesGivenGuard: a guard given to WithReadYourWrites is the
// one the controller records its writes in and waits on, in place of the
// one it would build; nil turns the guard off.
func TestReadYourWritesGivenGuard(t *testing.T) {
	rs := newRS("foobar", 0, fooBar)
	rs.ResourceVersion = "18"
	store := &fakeStore{}
	store.rv.Store("1")
	g := consistency.NewGuard(consistency.WithStore(appsv1.SchemeGroupVersion.WithResource("replicasets").GroupResource(), store))
	e := newEnv(t, []runtime.Object{rs}, WithReadYourWrites(g))
	e.addOwner(rs)
	require.NoError(t, e.sync(rs)) // writes the status at 18
	require.ErrorIs(t, e.sync(rs), consistency.ErrStaleCache, "held on the given guard")
	store.rv.Store("18")
	require.NoError(t, e.sync(rs), "the store caught up")

	off := newEnv(t, []runtime.Object{rs}, WithReadYourWrites(nil))
	off.addOwner(rs)
	require.NoError(t, off.sync(rs))
	require.NoError(t, off.sync(rs), "no guard holds it")
}

func TestGateStaleControllerConsistency(t *testing.T) {
	rs := newRS("foobar", 0, fooBar)
	rs.ResourceVersion = "18"
	g := newGateSwitch(StaleControllerConsistencyReplicaSet, true)
	e, _ := guardedEnv(t, rs, WithFeatureGates(g.enabled))
	require.NoError(t, e.sync(rs))
	require.ErrorIs(t, e.sync(rs), consistency.ErrStaleCache, "on: deferred")
	g.on.Store(false)
	require.NoError(t, e.sync(rs), "off: the next sync runs")
	g.on.Store(true)
	err := e.sync(rs)
	require.True(t, err == nil || errors.Is(err, consistency.ErrStaleCache))
}

// TestGateFlipWhileRunning flips DeploymentReplicaSetTerminatingReplicas
// while Run runs: the next sync writes the status the new way.
func TestGateFlipWhileRunning(t *testing.T) {
	rs := newRS("foobar", 1, fooBar)
	running := newPod("running", rs, v1.PodRunning, fooBar, true)
	going := newPod("going", rs, v1.PodRunning, fooBar, true)
	going.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	going.Finalizers = []string{"example.com/hold"}
	g := newGateSwitch(DeploymentReplicaSetTerminatingReplicas, true)
	e := newEnv(t, []runtime.Object{rs, running, going}, WithFeatureGates(g.enabled), WithReadYourWrites(nil))
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	infCtx, stopInformers := context.WithCancel(ctx)
	e.inf.Start(infCtx.Done())
	done := make(chan error, 1)
	go func() { done <- e.c.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done); stopInformers(); e.inf.Shutdown() }()
	require.Eventually(t, e.c.HasSynced, 10*time.Second, time.Millisecond)

	current := func() *appsv1.ReplicaSet {
		got, err := e.client.AppsV1().ReplicaSets("default").Get(ctx, "foobar", metav1.GetOptions{})
		require.NoError(t, err)
		return got
	}
	require.Eventually(t, func() bool {
		tr := current().Status.TerminatingReplicas
		return tr != nil && *tr == 1
	}, 10*time.Second, 5*time.Millisecond, "on: terminatingReplicas written")

	g.on.Store(false)
	e.queue().Add("default/foobar")
	require.Eventually(t, func() bool { return current().Status.TerminatingReplicas == nil }, 10*time.Second, 5*time.Millisecond,
		"off after the flip: terminatingReplicas cleared by the next sync")
}

// TestUnmetExpectationsRequeueAtExpiry: an owner whose creations are never
// observed is requeued for the moment its expectations expire, so it does
// not sleep forever without a resync.
func TestUnmetExpectationsRequeueAtExpiry(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rs := newRS("foobar", 1, fooBar)
	e := newEnv(t, []runtime.Object{rs}, WithClock(clk), WithReadYourWrites(nil))
	e.addOwner(rs)
	require.NoError(t, e.sync(rs))
	e.requireCounts(1, 0, 0) // the pod's add event never comes
	require.NoError(t, e.sync(rs))
	e.requireCounts(1, 0, 0) // asleep on its expectations
	assert.Zero(t, e.queue().Len())

	clk.Step(expectations.ExpectationsTimeout)
	time.Sleep(20 * time.Millisecond)
	assert.Zero(t, e.queue().Len(), "not before the expectations expire")
	clk.Step(10 * time.Millisecond)
	require.Eventually(t, func() bool { return e.queue().Len() == 1 }, 5*time.Second, time.Millisecond, "requeued at expiry")
	require.True(t, e.c.ProcessNextWorkItem(e.ctx))
	e.requireCounts(2, 0, 0)
}

// Kubernetes registries before 1.36 do not know
// StaleControllerConsistencyReplicaSet, and the informer stores of their
// client-go report no resource version: with such stores the gate is never
// asked, so a v1.34 or v1.35 gate lookup is safe to hand over.
func TestStaleConsistencyGateAskedOnlyWithVersionedStores(t *testing.T) {
	rs := newRS("foobar", 2, fooBar)
	var askedStale atomic.Bool
	gates := func(feature string) bool {
		if feature == StaleControllerConsistencyReplicaSet {
			askedStale.Store(true)
		}
		return DefaultFeatureGates(feature)
	}
	e := newEnv(t, []runtime.Object{rs}, WithFeatureGates(gates))
	e.addOwner(rs)
	require.NoError(t, e.sync(rs))
	var store any = e.podStore()
	_, versioned := store.(consistency.SyncedResourceVersioner)
	assert.Equal(t, versioned, askedStale.Load(), "the gate is asked exactly when there is a guard")
}
