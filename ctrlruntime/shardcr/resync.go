package shardcr

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
)

// Resync is a controller source that, whenever the share changes, lists
// the owners from the cache and enqueues every owner held now, at the low
// priority of an initial list. Owner events that arrived while an owner was
// held elsewhere were dropped by OwnerPredicate; this is how an owner that
// arrives in the share gets synced. It also passes every owner that left the
// share to a release function, which forgets what the controller kept about
// it (its expectations): a replica that gets an owner back must not wait for
// creations it can no longer observe. An owner the replica still wants
// (a lapse of its Lease, announced as a loss of every hash) is not
// released: a create the lapse cancelled may still be stored, and the
// expectation kept for it is what stops the next reconcile from making the
// same child again.
//
// Enqueueing every held owner rather than the new ones only is deliberate:
// a share can leave and come back between two passes, and an event dropped
// in between would be lost by a difference of shares. Changes are rare, and
// the queue merges duplicates.
type Resync struct {
	sharding *Sharding
	reader   client.Reader
	list     client.ObjectList
	release  func(client.Object)
}

var _ source.Source = (*Resync)(nil)

// NewResync returns the source for the owners list (an empty list of the
// owner kind, with its GroupVersionKind set for an unstructured one) read
// from reader, the manager's cache. release may be nil. A nil sharding,
// reader or list panics.
func NewResync(sharding *Sharding, reader client.Reader, list client.ObjectList, release func(client.Object)) *Resync {
	if sharding == nil || reader == nil || list == nil {
		panic("shardcr: NewResync: nil sharding, reader or list")
	}
	return &Resync{sharding: sharding, reader: reader, list: list, release: release}
}

// Start subscribes to the share and runs one pass at once, then one per
// change, on a goroutine that ends with ctx. The first pass covers owner
// events dropped before the controller started.
func (s *Resync) Start(ctx context.Context, q ctrlruntime.RequestQueue) error {
	changed, cancel := s.sharding.share.Subscribe()
	go func() {
		defer cancel()
		logger := log.FromContext(ctx).WithValues("source", s.String())
		for {
			// A list from the cache waits for it to sync, with ctx.
			if err := s.pass(ctx, q); err != nil && ctx.Err() == nil {
				logger.Error(err, "Resyncing the owners of a new share")
			}
			select {
			case <-ctx.Done():
				return
			case <-changed:
			}
		}
	}()
	return nil
}

func (s *Resync) pass(ctx context.Context, q ctrlruntime.RequestQueue) error {
	list := s.list.DeepCopyObject().(client.ObjectList)
	if err := s.reader.List(ctx, list); err != nil {
		return fmt.Errorf("shardcr: listing owners: %w", err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return fmt.Errorf("shardcr: reading owners: %w", err)
	}
	for _, item := range items {
		owner, ok := item.(client.Object)
		if !ok {
			continue
		}
		if s.sharding.HoldsOwner(owner) {
			ctrlruntime.Enqueue(q, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: owner.GetNamespace(), Name: owner.GetName()}}, true)
		} else if s.release != nil && !s.sharding.wantsOwner(owner) {
			s.release(owner)
		}
	}
	return nil
}

func (s *Resync) String() string { return fmt.Sprintf("shardcr: resync of %T", s.list) }
