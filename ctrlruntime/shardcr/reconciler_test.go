package shardcr_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/shardcr"
	"github.com/ctrlkit/ctrlkit/shard"
)

// recorder is an inner reconciler that reads its owner through a reader, as
// childset's core does, and remembers what it saw.
type recorder struct {
	reader client.Reader
	calls  []types.NamespacedName
	seen   []types.UID
	ctxOK  []bool // whether its context was live
	hook   func(ctx context.Context)
	err    error
}

func (r *recorder) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.calls = append(r.calls, req.NamespacedName)
	r.ctxOK = append(r.ctxOK, ctx.Err() == nil)
	if r.hook != nil {
		r.hook(ctx)
	}
	rs := &appsv1.ReplicaSet{}
	if err := r.reader.Get(ctx, req.NamespacedName, rs); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	r.seen = append(r.seen, rs.UID)
	return reconcile.Result{}, r.err
}

func request(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
}

func newOwner() client.Object { return &appsv1.ReplicaSet{} }

// A held owner is reconciled under a guard held for the whole reconcile;
// an owner held elsewhere is skipped without error and without a guard.
func TestReconcilerRunsHeldOwnersOnly(t *testing.T) {
	mine, theirs := replicaSet("mine", "uid-mine"), replicaSet("theirs", "uid-theirs")
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(mine, theirs).Build()
	share := newFixedShare(only(uidHash(mine.UID)))
	pins := shardcr.NewPins()
	inner := &recorder{reader: pins.Reader(c)}
	inner.hook = func(context.Context) {
		open, _ := share.counts()
		assert.Equal(t, 1, open, "the guard is held while the inner reconcile runs")
	}
	r := shardcr.NewReconciler(inner, shardcr.New(share, shard.KeyUID), c, newOwner, pins, nil)

	res, err := r.Reconcile(context.Background(), request("theirs"))
	require.NoError(t, err)
	assert.Zero(t, res)
	assert.Empty(t, inner.calls, "an owner held elsewhere is skipped")

	// Wanted but not held now (a Lease being renewed, a claim going
	// through): skipped, and tried again rather than dropped.
	share.mu.Lock()
	share.wanted = only(uidHash(theirs.UID))
	share.mu.Unlock()
	res, err = r.Reconcile(context.Background(), request("theirs"))
	require.NoError(t, err)
	assert.Positive(t, res.RequeueAfter, "a wanted owner turned away is tried again")
	assert.Empty(t, inner.calls)

	_, err = r.Reconcile(context.Background(), request("mine"))
	require.NoError(t, err)
	assert.Equal(t, []types.NamespacedName{{Namespace: "ns", Name: "mine"}}, inner.calls)
	assert.Equal(t, []types.UID{"uid-mine"}, inner.seen)
	open, taken := share.counts()
	assert.Equal(t, 0, open, "the guard is done when the reconcile returns")
	assert.Equal(t, 1, taken)
}

// An owner deleted and re-created under the same name between the hash and
// the core's read is refused by the pinned reader and retried at once, not
// worked on under the old owner's fence.
func TestReconcilerRefusesAReplacedOwner(t *testing.T) {
	old := replicaSet("x", "uid-old")
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(old).Build()
	share := newFixedShare(shard.FullRanges())
	pins := shardcr.NewPins()
	inner := &recorder{reader: pins.Reader(c)}
	inner.hook = func(ctx context.Context) {
		// The owner is replaced while the fence for the old one is held.
		require.NoError(t, c.Delete(ctx, old.DeepCopy()))
		require.NoError(t, c.Create(ctx, replicaSet("x", "uid-new")))
		inner.hook = nil
	}
	r := shardcr.NewReconciler(inner, shardcr.New(share, shard.KeyUID), c, newOwner, pins, nil)

	res, err := r.Reconcile(context.Background(), request("x"))
	require.NoError(t, err)
	assert.Positive(t, res.RequeueAfter, "retried")
	assert.Empty(t, inner.seen, "the core never saw the new owner under the old fence")

	// The retry fences the new owner and works on it.
	_, err = r.Reconcile(context.Background(), request("x"))
	require.NoError(t, err)
	assert.Equal(t, []types.UID{"uid-new"}, inner.seen)
}

// An owner gone from the cache is passed on unfenced (the core only
// forgets it), pinned as gone.
func TestReconcilerPassesGoneOwners(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
	share := newFixedShare(nil) // holds nothing
	pins := shardcr.NewPins()
	inner := &recorder{reader: pins.Reader(c)}
	r := shardcr.NewReconciler(inner, shardcr.New(share, shard.KeyUID), c, newOwner, pins, nil)
	_, err := r.Reconcile(context.Background(), request("gone"))
	require.NoError(t, err)
	assert.Len(t, inner.calls, 1)
	_, taken := share.counts()
	assert.Zero(t, taken)

	// One that appears meanwhile is refused: it may be another replica's.
	inner.hook = func(ctx context.Context) {
		require.NoError(t, c.Create(ctx, replicaSet("gone", "uid-new")))
	}
	res, err := r.Reconcile(context.Background(), request("gone"))
	require.NoError(t, err)
	assert.Positive(t, res.RequeueAfter)
	assert.Empty(t, inner.seen)
}

// By namespace, the request alone gives the hash: no cache read.
func TestReconcilerByNamespace(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(replicaSet("x", "u")).Build()
	share := newFixedShare(only(shard.Hash("ns")))
	inner := &recorder{reader: c}
	r := shardcr.NewReconciler(inner, shardcr.New(share, shard.KeyNamespace), c, newOwner, nil, nil)
	_, err := r.Reconcile(context.Background(), request("x"))
	require.NoError(t, err)
	_, err = r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "other", Name: "x"}})
	require.NoError(t, err)
	assert.Len(t, inner.calls, 1)
}

// A reconcile whose share moves away mid-way sees its context cancelled;
// the error that follows is not retried here, the new holder syncs the
// owner. Other errors go back to controller-runtime.
func TestReconcilerHandOverMidway(t *testing.T) {
	r, share, inner, released := reconcilerLosingTheShare(func(s *memberLikeShare) { s.giveUp() })
	res, err := r.Reconcile(context.Background(), request("x"))
	require.NoError(t, err)
	assert.Zero(t, res)
	assert.Equal(t, []string{"uid-x"}, *released, "what the reconcile recorded is forgotten with the hand-over")

	boom := errors.New("boom")
	share.set(shard.FullRanges())
	inner.hook, inner.err = nil, boom
	_, err = r.Reconcile(context.Background(), request("x"))
	assert.ErrorIs(t, err, boom)
	assert.Len(t, *released, 1, "an owner still held is not released")
}

// reconcilerLosingTheShare returns a Reconciler over owner "x" (UID
// "uid-x") whose inner reconcile calls lose on the share and waits for its
// context to end, and the UIDs it releases.
func reconcilerLosingTheShare(lose func(*memberLikeShare)) (*shardcr.Reconciler, *memberLikeShare, *recorder, *[]string) {
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(replicaSet("x", "uid-x")).Build()
	share := newMemberLikeShare(shard.FullRanges())
	inner := &recorder{reader: c}
	inner.hook = func(ctx context.Context) {
		lose(share)
		<-ctx.Done()
		inner.err = ctx.Err()
	}
	released := &[]string{}
	release := func(o client.Object) { *released = append(*released, string(o.GetUID())) }
	return shardcr.NewReconciler(inner, shardcr.New(share, shard.KeyUID), c, newOwner, nil, release), share, inner, released
}

// memberLikeShare cancels its guards when it gives its ranges up, as a
// shard.Member does.
type memberLikeShare struct {
	*fixedShare
	cancels []context.CancelFunc
}

func newMemberLikeShare(held shard.Ranges) *memberLikeShare {
	return &memberLikeShare{fixedShare: newFixedShare(held)}
}

func (m *memberLikeShare) Guard(ctx context.Context, h uint64) (context.Context, context.CancelFunc, bool) {
	gctx, done, ok := m.fixedShare.Guard(ctx, h)
	m.cancels = append(m.cancels, done)
	return gctx, done, ok
}

// lapse stops the guards as a Lease not renewed in time does: nothing is
// held, and everything held is still wanted.
func (m *memberLikeShare) lapse() {
	m.mu.Lock()
	m.wanted = m.held
	m.mu.Unlock()
	m.giveUp()
}

func (m *memberLikeShare) giveUp() {
	m.set(nil)
	for _, c := range m.cancels {
		c()
	}
}

// A lapse of the replica's Lease mid-reconcile (it may not work on the hash
// now, but still wants it) keeps what the reconcile recorded: a create the
// lapse cancelled may still be stored, and only the kept expectation stops
// the reconcile after the lapse from making the same child again. The owner
// comes back once the hash is held again.
func TestReconcilerKeepsAnOwnerThroughALapse(t *testing.T) {
	r, _, _, released := reconcilerLosingTheShare(func(s *memberLikeShare) { s.lapse() })
	res, err := r.Reconcile(context.Background(), request("x"))
	require.NoError(t, err)
	assert.Positive(t, res.RequeueAfter, "the owner comes back once the hash is held again")
	assert.Empty(t, *released, "a lapse forgot what the reconcile recorded")
}
