package shardcr

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/shard"
)

// ErrOwnerReplaced is returned by a PinnedReader when the owner a reconcile
// was fenced for is no longer the one the cache shows under its name: it
// was deleted and re-created, and the new one may belong to another
// replica. The Reconciler answers it by trying again.
var ErrOwnerReplaced = errors.New("shardcr: owner replaced during the reconcile")

// replacedRetry is how soon a reconcile that met a replaced owner runs
// again: at once, as a new request, outside the rate limiter.
const replacedRetry = time.Millisecond

// wantedRetry is how soon a reconcile turned away by the fence runs again
// when the owner's hash is still in the replica's share: its Lease is
// being renewed or its claim goes through at the member's next step.
const wantedRetry = time.Second

// coverageRetry is how soon a reconcile put off until the cache shows its
// owner's hash in full runs again: a relist takes a round trip or a few.
const coverageRetry = 100 * time.Millisecond

// Reconciler wraps a controller's reconcile.Reconciler so that it works
// only on the owners this replica holds. Each request is fenced:
//
//   - The owner's hash comes from the request (KeyNamespace) or from the
//     owner in reader, the manager's cache (KeyUID).
//   - Guard(hash) is taken for the whole inner reconcile, which gets the
//     guarded context: it is cancelled the moment the replica gives the
//     hash up, and the replica keeps claiming the hash until the inner
//     reconcile returned, so the next holder starts after it.
//   - While a cache filtered for the sharding (CacheFilter) has not listed
//     the owner's hash yet, just after it arrived in the share, the
//     reconcile is put off and comes back shortly: the cache may show the
//     owner without its children.
//   - An owner not held is skipped without error: its holder reconciles it.
//     One the replica may not work on now but still wants (shard's Wants:
//     its Lease is being renewed, or the hash is being taken up) comes back
//     a second later, so a refusal never loses the owner.
//     One whose hash moved to another replica during the reconcile is
//     released (its expectations forgotten) once the reconcile returned;
//     one the replica lost to a lapse of its Lease keeps them, since the
//     writes the lapse cancelled may still land, and comes back a second
//     later.
//   - An owner missing from the cache (KeyUID) has no hash: the inner
//     reconcile runs unfenced, so it must write nothing for an owner it
//     cannot find, which is what childset and podset do (they forget it).
//   - With KeyUID the owner's UID is pinned for the reconcile: a
//     PinnedReader (Pins) under the inner reconcile refuses to show another
//     owner under the same name, so the fence never covers an owner it was
//     not taken for.
type Reconciler struct {
	inner    reconcile.Reconciler
	sharding *Sharding
	reader   client.Reader
	newOwner ownerObject
	pins     *Pins
	release  func(client.Object)
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// NewReconciler wraps inner. reader is where owners are read to hash them
// by UID (the manager's cache), and newOwner returns an empty owner of the
// controller's kind (with its GroupVersionKind set for an unstructured
// one). pins is what inner's owner reads go through (Pins.Reader); nil
// means inner reads owners some other way and only the fence applies.
// release, as Resync's, forgets what the controller kept about an owner;
// it is called when a reconcile ends after its owner's hash moved away, so
// what that reconcile recorded (expectations of creations it can no longer
// observe) does not outlive the hand-over; nil means nothing to forget. A
// nil inner, sharding, reader or newOwner panics.
func NewReconciler(inner reconcile.Reconciler, sharding *Sharding, reader client.Reader, newOwner func() client.Object, pins *Pins, release func(client.Object)) *Reconciler {
	if inner == nil || sharding == nil || reader == nil || newOwner == nil {
		panic("shardcr: NewReconciler: nil reconciler, sharding, reader or owner constructor")
	}
	return &Reconciler{inner: inner, sharding: sharding, reader: reader, newOwner: newOwner, pins: pins, release: release}
}

// Reconcile runs the inner reconcile under the fence of the owner req
// names, or skips it when this replica does not hold the owner.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var h uint64
	if r.sharding.key == shard.KeyNamespace {
		h = shard.Hash(req.Namespace)
	} else {
		owner := r.newOwner()
		err := r.reader.Get(ctx, req.NamespacedName, owner)
		if apierrors.IsNotFound(err) {
			// Gone: the inner reconcile only forgets what it kept about
			// it, which writes nothing, so it runs unfenced; the pin
			// makes sure it sees no new owner of that name.
			return r.run(ctx, req, nil, 0, false)
		}
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("shardcr: reading owner %s: %w", req.NamespacedName, err)
		}
		h = shard.Hash(string(owner.GetUID()))
		return r.run(ctx, req, owner, h, true)
	}
	return r.run(ctx, req, nil, h, true)
}

// run runs the inner reconcile under the fence of h (unless not fenced),
// pinned to owner (KeyUID; nil for an owner seen gone).
func (r *Reconciler) run(ctx context.Context, req reconcile.Request, owner client.Object, h uint64, fenced bool) (reconcile.Result, error) {
	inner := ctx
	if fenced {
		guarded, done, ok := r.sharding.share.Guard(ctx, h)
		if !ok {
			if r.sharding.share.Wants(h) {
				return reconcile.Result{RequeueAfter: wantedRetry}, nil
			}
			return reconcile.Result{}, nil
		}
		defer done()
		if !r.sharding.cacheCovers(h) {
			// h arrived in the share and a cache has not listed it yet:
			// the owner may be there without its children.
			return reconcile.Result{RequeueAfter: coverageRetry}, nil
		}
		inner = guarded
	}
	if r.pins != nil && r.sharding.key == shard.KeyUID {
		var uid types.UID
		if owner != nil {
			uid = owner.GetUID()
		}
		r.pins.pin(req.NamespacedName, uid)
		defer r.pins.unpin(req.NamespacedName)
	}
	res, err := r.inner.Reconcile(inner, req)
	lost := fenced && !r.sharding.share.Holds(h)
	movedAway := lost && !r.sharding.share.Wants(h)
	if movedAway && r.release != nil {
		r.releaseMoved(ctx, req, owner)
	}
	switch {
	case err == nil:
		return res, nil
	case errors.Is(err, ErrOwnerReplaced):
		return reconcile.Result{RequeueAfter: replacedRetry}, nil
	case lost && ctx.Err() == nil && inner.Err() != nil:
		if movedAway {
			// Its next holder syncs the owner; retrying here would only
			// be skipped.
			return reconcile.Result{}, nil
		}
		// A lapse: the replica takes the hash up again and syncs the
		// owner then, with what it kept about the cancelled writes.
		return reconcile.Result{RequeueAfter: wantedRetry}, nil
	}
	return res, err
}

// releaseMoved forgets an owner whose hash moved away while it was being
// reconciled. By namespace the owner was not read yet; a failed read
// leaves it to Resync's next pass.
func (r *Reconciler) releaseMoved(ctx context.Context, req reconcile.Request, owner client.Object) {
	if owner == nil {
		owner = r.newOwner()
		if err := r.reader.Get(ctx, req.NamespacedName, owner); err != nil {
			return
		}
	}
	r.release(owner)
}

// Pins are the owner UIDs reconciles are fenced for, by owner name. The
// Reconciler sets one for each reconcile; a PinnedReader checks owner reads
// against it. controller-runtime never runs two reconciles of one request
// at once in a controller, so one pin per name suffices.
type Pins struct {
	m sync.Map // types.NamespacedName -> types.UID ("" for an owner seen gone)
}

// NewPins returns an empty set of pins.
func NewPins() *Pins { return &Pins{} }

func (p *Pins) pin(name types.NamespacedName, uid types.UID) { p.m.Store(name, uid) }
func (p *Pins) unpin(name types.NamespacedName)              { p.m.Delete(name) }

// Reader returns reader with the pins checked on every Get: a Get of a
// pinned name that finds an owner with another UID, or finds one where the
// pin says gone, fails with ErrOwnerReplaced. Lists pass through. A nil
// reader panics.
func (p *Pins) Reader(reader client.Reader) client.Reader {
	if reader == nil {
		panic("shardcr: Pins.Reader: nil reader")
	}
	return pinnedReader{Reader: reader, pins: p}
}

type pinnedReader struct {
	client.Reader
	pins *Pins
}

func (r pinnedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := r.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if v, ok := r.pins.m.Load(key); ok {
		if uid := v.(types.UID); uid != obj.GetUID() {
			return fmt.Errorf("%w: %s was fenced as %q, the cache shows %q", ErrOwnerReplaced, key, uid, obj.GetUID())
		}
	}
	return nil
}
