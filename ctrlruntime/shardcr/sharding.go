package shardcr

import (
	"context"
	"fmt"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/ctrlkit/ctrlkit/shard"
)

// Share is what a sharded controller asks of its ring: *Member is one. A
// test may supply a fixed share.
type Share interface {
	// Holds reports whether the replica may work on hash h now.
	Holds(h uint64) bool
	// Held is the set of hashes the replica may work on now.
	Held() shard.Ranges
	// Guard fences one piece of work on h (shard.Member.Guard).
	Guard(ctx context.Context, h uint64) (context.Context, context.CancelFunc, bool)
	// Wants reports whether h is in the replica's share even while it may
	// not work on h (shard.Member.Wants): work Guard turned away is then
	// tried again.
	Wants(h uint64) bool
	// Subscribe signals changes of Held (Member.Subscribe).
	Subscribe() (<-chan struct{}, func())
}

// Sharding is one controller's way of splitting its owners over a ring:
// the share of this replica and the key owners are hashed by. Owners hash
// by key (shard.HashObject); children follow the owner their controller
// reference names (by the owner's UID for KeyUID, by their own namespace,
// which is the owner's, for KeyNamespace).
type Sharding struct {
	share Share
	key   shard.Key

	mu       sync.Mutex
	coverage []func(h uint64) bool // the caches' CacheFilter.Covers
}

// New returns the sharding of a controller over share by key. A nil share
// or an unknown key panics.
func New(share Share, key shard.Key) *Sharding {
	if share == nil {
		panic("shardcr: New: nil share")
	}
	if !key.Valid() {
		panic(fmt.Sprintf("shardcr: New: unknown key %q", string(key)))
	}
	return &Sharding{share: share, key: key}
}

// addCoverage registers the Covers of a cache filtered for this sharding.
func (s *Sharding) addCoverage(covers func(h uint64) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.coverage = append(s.coverage, covers)
}

// cacheCovers reports whether every cache filtered for this sharding shows
// hash h in full; true without such a cache.
func (s *Sharding) cacheCovers(h uint64) bool {
	s.mu.Lock()
	coverage := slices.Clone(s.coverage)
	s.mu.Unlock()
	for _, covers := range coverage {
		if !covers(h) {
			return false
		}
	}
	return true
}

// Share is the share the sharding consults.
func (s *Sharding) Share() Share { return s.share }

// Key is the field owners are hashed by.
func (s *Sharding) Key() shard.Key { return s.key }

// OwnerHash is the hash that places owner in a share.
func (s *Sharding) OwnerHash(owner metav1.Object) (uint64, error) {
	return shard.HashObject(owner, s.key)
}

// ChildHash is the hash of the owner a child follows, and false for an
// orphan sharded by UID: any replica's owner may adopt it.
func (s *Sharding) ChildHash(child metav1.Object) (uint64, bool) {
	if s.key == shard.KeyNamespace {
		return shard.Hash(child.GetNamespace()), true
	}
	ref := metav1.GetControllerOfNoCopy(child)
	if ref == nil {
		return 0, false
	}
	return shard.Hash(string(ref.UID)), true
}

// HoldsOwner reports whether this replica works on owner now. A nil owner
// is held by no one.
func (s *Sharding) HoldsOwner(owner metav1.Object) bool {
	if owner == nil {
		return false
	}
	h, err := s.OwnerHash(owner)
	return err == nil && s.share.Holds(h)
}

// wantsOwner reports whether owner is in this replica's share even while
// it may not work on it now: its Lease lapsed and is being renewed, or its
// hash is being taken up. What the controller kept about such an owner
// (expectations, writes of unknown outcome) is kept: the writes a lapse
// cancelled may still land, and only that memory makes the next reconcile
// wait for them.
func (s *Sharding) wantsOwner(owner metav1.Object) bool {
	h, err := s.OwnerHash(owner)
	return err == nil && s.share.Wants(h)
}

// KeepsChild reports whether this replica cares about child now: its
// controller is held, or it is an orphan some owner here may adopt.
func (s *Sharding) KeepsChild(child metav1.Object) bool {
	if child == nil {
		return false
	}
	h, ok := s.ChildHash(child)
	return !ok || s.share.Holds(h)
}

// OwnerPredicate passes the events of owners this replica holds. Deletions
// pass as well, so that what a handler forgets about a deleted owner is
// forgotten on every replica, held or not.
func (s *Sharding) OwnerPredicate() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return s.HoldsOwner(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return s.HoldsOwner(e.ObjectNew) },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(e event.GenericEvent) bool { return s.HoldsOwner(e.Object) },
	}
}

// ChildPredicate passes the events of children whose controller this
// replica holds, and of orphans (KeepsChild). An update passes when the
// child was kept before or after it, so a controller reference that moved
// from an owner held here to one held elsewhere still reaches the old one.
func (s *Sharding) ChildPredicate() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return s.KeepsChild(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return s.KeepsChild(e.ObjectOld) || s.KeepsChild(e.ObjectNew)
		},
		DeleteFunc:  func(e event.DeleteEvent) bool { return s.KeepsChild(e.Object) },
		GenericFunc: func(e event.GenericEvent) bool { return s.KeepsChild(e.Object) },
	}
}

// ownerObject is a client.Object constructor for the owner kind.
type ownerObject = func() client.Object
