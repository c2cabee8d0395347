package shardcr_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/shardcr"
	"github.com/ctrlkit/ctrlkit/shard"
)

// Owner events pass only for held owners (deletions always); child events
// follow the controller reference, and orphans pass everywhere.
func TestPredicatesByUID(t *testing.T) {
	mine, theirs := replicaSet("mine", "uid-mine"), replicaSet("theirs", "uid-theirs")
	share := newFixedShare(only(uidHash(mine.UID)))
	s := shardcr.New(share, shard.KeyUID)

	owners := s.OwnerPredicate()
	assert.True(t, owners.Create(event.CreateEvent{Object: mine}))
	assert.False(t, owners.Create(event.CreateEvent{Object: theirs}))
	assert.True(t, owners.Update(event.UpdateEvent{ObjectOld: mine, ObjectNew: mine}))
	assert.False(t, owners.Update(event.UpdateEvent{ObjectOld: theirs, ObjectNew: theirs}))
	assert.False(t, owners.Generic(event.GenericEvent{Object: theirs}))
	assert.True(t, owners.Delete(event.DeleteEvent{Object: theirs}), "deletions reach every replica")

	children := s.ChildPredicate()
	ours, others, orphan := podOf("a", mine), podOf("b", theirs), podOf("c", nil)
	assert.True(t, children.Create(event.CreateEvent{Object: ours}))
	assert.False(t, children.Create(event.CreateEvent{Object: others}))
	assert.True(t, children.Create(event.CreateEvent{Object: orphan}), "any owner may adopt an orphan")
	assert.False(t, children.Delete(event.DeleteEvent{Object: others}))
	// A child handed from our owner to theirs still reaches ours.
	assert.True(t, children.Update(event.UpdateEvent{ObjectOld: ours, ObjectNew: podOf("a", theirs)}))
	assert.False(t, children.Update(event.UpdateEvent{ObjectOld: others, ObjectNew: others}))

	// When the share moves, so do the events.
	share.set(only(uidHash(theirs.UID)))
	assert.False(t, owners.Create(event.CreateEvent{Object: mine}))
	assert.True(t, children.Create(event.CreateEvent{Object: others}))
}

// By namespace, owners and children of one namespace go together, orphans
// included.
func TestPredicatesByNamespace(t *testing.T) {
	share := newFixedShare(only(shard.Hash("ns")))
	s := shardcr.New(share, shard.KeyNamespace)
	rs := replicaSet("x", "uid-x")
	elsewhere := replicaSet("y", "uid-y")
	elsewhere.Namespace = "other"
	assert.True(t, s.HoldsOwner(rs))
	assert.False(t, s.HoldsOwner(elsewhere))
	orphan := podOf("o", nil)
	assert.True(t, s.KeepsChild(orphan))
	orphan.Namespace = "other"
	assert.False(t, s.KeepsChild(orphan), "an orphan of another namespace has no owner here")
}

func TestNewPanicsOnProgrammerErrors(t *testing.T) {
	assert.PanicsWithValue(t, "shardcr: New: nil share", func() { shardcr.New(nil, shard.KeyUID) })
	assert.Panics(t, func() { shardcr.New(newFixedShare(nil), shard.Key("spec.nodeName")) })
}
