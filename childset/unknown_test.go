package childset_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// faults makes the simulated API store every create (or delete) of a
// ConfigMap and then answer it with err, while on.
type faults struct{ on atomic.Bool }

func (e *env) failAfterApplying(verb string, err error) *faults {
	f := &faults{}
	f.on.Store(true)
	e.cluster.FailAfterApplying(verb, "configmaps", func(k8stesting.Action) error {
		if f.on.Load() {
			return err
		}
		return nil
	})
	return f
}

var (
	gatewayTimeout = apierrors.NewTimeoutError("request did not complete within 34s", 0)
	serverTimeout  = apierrors.NewServerTimeout(schema.GroupResource{Resource: "configmaps"}, "create", 2)
)

// syncHeld reconciles the owner n times while the cache sees none of the
// API's changes (a held watch), and fails as soon as the API holds more
// than most children.
func (e *env) syncHeld(n, most int) {
	e.t.Helper()
	for i := range n {
		_, _ = e.r.Reconcile(context.Background(), ns+"/web") // the errors are the faults'
		require.LessOrEqual(e.t, len(e.apiChildren()), most, "after sync %d with the cache held: %v", i+1, e.apiNames())
	}
}

// converge catches the cache up and reconciles, 50 times, never seeing
// more than most children in the API. The syncs' errors are the faults'.
func (e *env) converge(most int) {
	e.t.Helper()
	for range 50 {
		e.catchUp()
		_, _ = e.r.Reconcile(context.Background(), ns+"/web")
		require.LessOrEqual(e.t, len(e.apiChildren()), most, e.apiNames())
	}
	e.catchUp()
	e.reconcile("web")
}

// A create the API server stored but answered with a 504 or a
// ServerTimeout keeps its expectation: the syncs that follow, over a cache
// that has not seen the child, create nothing more. The previous code
// lowered the expectation and created again at every sync: 10 children
// for 5 after 10 syncs.
func TestUnknownCreateKeepsExpectationInterchangeable(t *testing.T) {
	for name, answer := range map[string]error{"504": gatewayTimeout, "ServerTimeout": serverTimeout} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.addOwner(newOwner("web", 5))
			f := e.failAfterApplying("create", answer)
			e.syncHeld(10, 5)
			e.converge(5)
			// Every create failed, yet each one after the first waited for
			// the child before it to be observed.
			assert.Len(t, e.apiChildren(), 5)
			f.on.Store(false)
			e.converge(5)
			assert.Len(t, e.apiChildren(), 5)
			assert.True(t, e.r.Expectations().SatisfiedExpectations(ownerKey(e)))
		})
	}
}

// A create answered 504 that the API server did not store is resolved by
// the next sync once the server answers again, not by the expectations'
// TTL: the same create is sent again, by the name the controller chose.
func TestUnknownCreateNotStoredIsResolvedBeforeTTL(t *testing.T) {
	e := newEnv(t)
	e.addOwner(newOwner("web", 3))
	var lost atomic.Int32
	e.client.PrependReactor("create", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		if lost.Add(1) == 1 {
			return true, nil, gatewayTimeout // lost before it was stored
		}
		return false, nil, nil
	})
	_, err := e.r.Reconcile(context.Background(), ns+"/web")
	require.Error(t, err)
	require.Empty(t, e.apiChildren())
	e.syncHeld(5, 3)
	require.Len(t, e.apiChildren(), 1, "the second sync sends the lost create again")
	first := e.writes()
	assert.Equal(t, first[0], first[1], "the create is sent again under its name")
	e.converge(3)
	assert.Len(t, e.apiChildren(), 3)
}

// Indexed children: a named create of unknown outcome stays expected by
// name, and is resolved by sending it again (AlreadyExists: the first one
// stored it). The previous code stopped expecting the name, met its own
// child as AlreadyExists and reported it as held by a foreign object.
func TestUnknownCreateKeepsExpectationIndexed(t *testing.T) {
	e := newEnv(t, childset.WithIndexedNames(nil))
	e.addOwner(newOwner("web", 5))
	e.failAfterApplying("create", gatewayTimeout)
	e.syncHeld(10, 5)
	for _, ev := range e.events() {
		assert.NotContains(t, ev, childset.ReasonNameConflict, "the owner's own child is no name conflict")
	}
	assert.Equal(t, []string{"web-0"}, e.apiNames(), "web-1 waits until web-0 is known")
	e.converge(5)
	assert.Equal(t, names("web", 0, 1, 2, 3, 4), e.apiNames())
	for _, ev := range e.events() {
		assert.NotContains(t, ev, childset.ReasonNameConflict)
	}
}

// Mid-rollout with maxSurge 1, surge creates answered 504 after being
// stored never take the owner past replicas+maxSurge. The previous code
// created a surge child at every sync: 15 children for a limit of 6.
func TestUnknownCreateKeepsExpectationMidRollout(t *testing.T) {
	e := newRollEnv(t, 5, childset.RollingUpdate{MaxSurge: num(1), MaxUnavailable: num(0)})
	e.settle()
	require.Len(t, e.apiChildren(), 5)
	e.setVersion("v2")
	f := e.failAfterApplying("create", gatewayTimeout)
	e.syncHeld(10, 6)
	f.on.Store(false)
	e.steps(func(int) {
		require.LessOrEqual(t, len(e.apiChildren()), 6, e.apiNames())
	})
	children := e.apiChildren()
	require.Len(t, children, 5)
	for _, cm := range children {
		assert.Equal(t, "v2", cm.Data["version"], cm.Name)
	}
}

// A delete answered 504 after it was applied keeps its deletion
// expectation: the syncs that follow, over a cache that still shows the
// child, delete no other child in its place. The previous code deleted
// again at every sync: 40 delete calls for 4 needed.
func TestUnknownDeleteKeepsExpectation(t *testing.T) {
	e := newEnv(t)
	owner := newOwner("web", 4)
	e.addOwner(owner)
	for i := range 8 {
		e.seed(newChild(names("web", i)[0], owner, owner.Spec.Selector.MatchLabels))
	}
	e.failAfterApplying("delete", gatewayTimeout)
	for range 10 {
		_, _ = e.r.Reconcile(context.Background(), ns+"/web")
	}
	assert.Len(t, e.apiChildren(), 4, "never below spec")
	assert.LessOrEqual(t, countPrefix(e.writes(), "delete "), 8,
		"each of the 4 deletes sent at most once more, to resolve it: %v", e.writes())
	e.converge(8)
	assert.Len(t, e.apiChildren(), 4)
	assert.True(t, e.r.Expectations().SatisfiedExpectations(ownerKey(e)))
}

func ownerKey(e *env) string {
	obj, _, _ := e.owners.GetByKey(ns + "/web")
	return expectations.OwnerKeyFor(obj.(metav1.Object))
}

// The client-go driver over real informers, the children's watch held for
// 2 s while every create is stored and answered 504: the API never holds
// more than 5 children, and the owner converges once the watch is
// released. The previous code created 9 for 5.
func TestControllerUnknownCreatesWithHeldWatch(t *testing.T) {
	cluster := simcluster.New()
	e := &env{t: t, cluster: cluster, client: cluster.Client()}
	e.failAfterApplying("create", gatewayTimeout)
	owner := newOwner("web", 5)
	owner.UID = ""
	_, err := e.client.AppsV1().ReplicaSets(ns).Create(context.Background(), owner, metav1.CreateOptions{})
	require.NoError(t, err)
	release := cluster.HoldWatches(v1.SchemeGroupVersion.WithResource("configmaps"))
	_, stop, done := startController(t, cluster, childset.WithWorkers(2))
	defer func() {
		stop()
		require.NoError(t, <-done)
	}()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		require.LessOrEqual(t, len(e.apiChildren()), 5, e.apiNames())
	}
	release()
	err = wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		n := len(e.apiChildren())
		require.LessOrEqual(t, n, 5, e.apiNames())
		return n == 5, nil
	})
	require.NoError(t, err, "converged to %v", e.apiNames())
}

// The names childset chooses for counted creates skip the names the cache
// holds: a create answered AlreadyExists is taken for an earlier attempt
// of itself, so a name drawn twice would leave the owner expecting a child
// that never comes. The random source is seeded to draw a cached name
// first.
func TestCountedCreateSkipsNamesTheCacheHolds(t *testing.T) {
	e := newEnv(t)
	e.addOwner(newOwner("web", 2))
	utilrand.Seed(7)
	e.seed(newChild("web-"+utilrand.String(5), nil, map[string]string{"app": "other"}))

	utilrand.Seed(7)
	e.reconcile("web") // fails if a create meets AlreadyExists
	e.catchUp()
	assert.Len(t, e.apiChildren(), 3, e.apiNames())
	assert.Empty(t, e.events(), "no name conflict")
	e.reconcile("web")
	assert.Len(t, e.apiChildren(), 3, e.apiNames())
}
