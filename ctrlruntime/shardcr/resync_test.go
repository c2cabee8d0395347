package shardcr_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/shardcr"
	"github.com/ctrlkit/ctrlkit/shard"
)

// drain returns the names queued, sorted, and marks them done.
func drain(q workqueue.TypedRateLimitingInterface[reconcile.Request]) []string {
	var names []string
	for q.Len() > 0 {
		req, _ := q.Get()
		names = append(names, req.Name)
		q.Done(req)
	}
	slices.Sort(names)
	return names
}

// Resync enqueues the held owners at start and after every change, and
// releases the others, until its context ends.
func TestResyncEnqueuesTheShare(t *testing.T) {
	a, b, c := replicaSet("a", "uid-a"), replicaSet("b", "uid-b"), replicaSet("c", "uid-c")
	cl := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(a, b, c).Build()
	share := newFixedShare(only(uidHash(a.UID)))
	var mu sync.Mutex
	var released []string
	release := func(o client.Object) { mu.Lock(); released = append(released, o.GetName()); mu.Unlock() }
	src := shardcr.NewResync(shardcr.New(share, shard.KeyUID), cl, &appsv1.ReplicaSetList{}, release)

	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, src.Start(ctx, q))

	releasedNow := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := slices.Clone(released)
		slices.Sort(out)
		return out
	}
	require.Eventually(t, func() bool { return q.Len() == 1 && len(releasedNow()) == 2 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, []string{"a"}, drain(q))
	assert.Equal(t, []string{"b", "c"}, releasedNow(), "owners held elsewhere are released")

	share.set(shard.NewRanges(only(uidHash(b.UID))[0], only(uidHash(c.UID))[0]))
	require.Eventually(t, func() bool { return q.Len() == 2 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, []string{"b", "c"}, drain(q))
	require.Eventually(t, func() bool { return len(releasedNow()) == 3 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, []string{"a", "b", "c"}, releasedNow(), "the owner that left is released, the arrivals are not")

	// A lapse: nothing is held, all of it still wanted. Nothing is released
	// (a create the lapse cancelled may still land) and nothing queued.
	share.mu.Lock()
	share.wanted = share.held
	share.mu.Unlock()
	before := len(releasedNow())
	share.set(nil)
	keptReleased := func() bool {
		mu.Lock()
		defer mu.Unlock()
		since := released[before:]
		return slices.Contains(since, "b") || slices.Contains(since, "c")
	}
	require.Never(t, func() bool { return keptReleased() || q.Len() > 0 }, 200*time.Millisecond, time.Millisecond,
		"a lapse released or queued an owner it still wants")
	share.set(share.wanted)
	require.Eventually(t, func() bool { return q.Len() == 2 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, []string{"b", "c"}, drain(q), "the owners come back with the share")
	assert.False(t, keptReleased())
}
