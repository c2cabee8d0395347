package claim_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/claim"
)

const listingIndex = "by-controller"

// countingIndexer counts the ByIndex reads, to tell a kept listing from a
// read of the store.
type countingIndexer struct {
	cache.Indexer
	reads int
}

func (c *countingIndexer) ByIndex(name, value string) ([]any, error) {
	c.reads++
	return c.Indexer.ByIndex(name, value)
}

func newListingIndexer(fn cache.IndexFunc) *countingIndexer {
	return &countingIndexer{Indexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{listingIndex: fn})}
}

var listingOwners = []*metav1.OwnerReference{
	{Kind: "ReplicaSet", Name: "a", UID: "uid-a", Controller: new(true)},
	{Kind: "ReplicaSet", Name: "b", UID: "uid-b", Controller: new(true)},
	nil, // an orphan
}

func listingPod(name string, owner *metav1.OwnerReference) *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
	if owner != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return pod
}

func ownerKey(owner *metav1.OwnerReference) string { return claim.ControllerIndexKey("ns", owner) }

// TestIndexListingFollowsTheStore applies random adds, updates, deletes and
// relists (Replace) to a store and, after each, reads every key through a
// listing kept across the whole run: each read must list exactly the
// objects the store files under the key.
func TestIndexListingFollowsTheStore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	indexer := newListingIndexer(claim.IndexByController)
	listings := make([]claim.IndexListing[*v1.Pod], len(listingOwners))
	names := []string{"p0", "p1", "p2", "p3", "p4", "p5"}
	kept := 0
	for step := range 5000 {
		name := names[rng.IntN(len(names))]
		owner := listingOwners[rng.IntN(len(listingOwners))]
		switch op := rng.IntN(10); {
		case op < 4:
			require.NoError(t, indexer.Update(listingPod(name, owner)))
		case op < 6:
			if obj, ok, _ := indexer.GetByKey("ns/" + name); ok {
				require.NoError(t, indexer.Delete(obj))
			}
		case op < 8:
			// A step with no change: the listings must be kept.
		default:
			// A relist: some objects kept as they are, some replaced by a
			// copy or moved to another owner, some gone.
			var list []any
			for _, obj := range indexer.List() {
				switch rng.IntN(4) {
				case 0:
					list = append(list, obj)
				case 1:
					list = append(list, obj.(*v1.Pod).DeepCopy())
				case 2:
					list = append(list, listingPod(obj.(*v1.Pod).Name, listingOwners[rng.IntN(len(listingOwners))]))
				}
			}
			require.NoError(t, indexer.Replace(list, ""))
		}
		for i, owner := range listingOwners {
			before := indexer.reads
			got, err := listings[i].AppendTo(nil, indexer, listingIndex, ownerKey(owner))
			require.NoError(t, err)
			if indexer.reads == before {
				kept++
			}
			want, err := indexer.Indexer.ByIndex(listingIndex, ownerKey(owner))
			require.NoError(t, err)
			require.ElementsMatch(t, want, asAny(got), "step %d, key %q", step, ownerKey(owner))
		}
	}
	// Every step without a change keeps all three listings.
	assert.Greater(t, kept, 5000*3/10, "listings reused")
}

func asAny(pods []*v1.Pod) []any {
	out := make([]any, len(pods))
	for i, p := range pods {
		out[i] = p
	}
	return out
}

// ownedAndOther is a store holding a pod of the first owner and one of
// the second.
func ownedAndOther(t *testing.T) (indexer *countingIndexer, owned, other *v1.Pod) {
	t.Helper()
	indexer = newListingIndexer(claim.IndexByController)
	owned, other = listingPod("owned", listingOwners[0]), listingPod("other", listingOwners[1])
	require.NoError(t, indexer.Add(owned))
	require.NoError(t, indexer.Add(other))
	return indexer, owned, other
}

// TestIndexListingSeesARelistThatEmptiesAKey: a relist that drops every
// object of a key re-files none under it, so the key's clock does not move;
// the listing must still see the key empty.
func TestIndexListingSeesARelistThatEmptiesAKey(t *testing.T) {
	indexer, owned, other := ownedAndOther(t)
	var l claim.IndexListing[*v1.Pod]
	got, err := l.AppendTo(nil, indexer, listingIndex, ownerKey(listingOwners[0]))
	require.NoError(t, err)
	require.Equal(t, []*v1.Pod{owned}, got)

	require.NoError(t, indexer.Replace([]any{other}, ""))
	got, err = l.AppendTo(nil, indexer, listingIndex, ownerKey(listingOwners[0]))
	require.NoError(t, err)
	assert.Empty(t, got)
}

// TestIndexListingKeepsAnUnchangedKey: reads of an unchanged key, and of a
// key whose neighbours change, do not read the store; a change of the key
// does.
func TestIndexListingKeepsAnUnchangedKey(t *testing.T) {
	indexer := newListingIndexer(claim.IndexByController)
	require.NoError(t, indexer.Add(listingPod("p0", listingOwners[0])))
	var l claim.IndexListing[*v1.Pod]
	read := func() []*v1.Pod {
		t.Helper()
		got, err := l.AppendTo(nil, indexer, listingIndex, ownerKey(listingOwners[0]))
		require.NoError(t, err)
		return got
	}
	read()
	reads := indexer.reads
	read()
	assert.Equal(t, reads, indexer.reads, "an unchanged key is read from the listing")

	for i := range 50 {
		require.NoError(t, indexer.Add(listingPod(fmt.Sprintf("b%d", i), listingOwners[1])))
	}
	read()
	// The other key's 50 adds share a clock with this key only if their
	// hashes collide, once in 16,384.
	assert.Equal(t, reads, indexer.reads, "another key's changes leave the listing")

	changed := listingPod("p0", listingOwners[0])
	changed.Labels = map[string]string{"changed": "yes"}
	require.NoError(t, indexer.Update(changed))
	got := read()
	assert.Equal(t, reads+1, indexer.reads, "a changed key is read again")
	assert.Same(t, changed, got[0])
}

// TestIndexListingReadsAnotherIndexFunctionEveryTime: only
// IndexByController advances the clocks, so an index under another
// function is never kept.
func TestIndexListingReadsAnotherIndexFunctionEveryTime(t *testing.T) {
	// The same keys, from a function of the caller's.
	own := func(obj any) ([]string, error) {
		keys, err := claim.IndexByController(obj)
		return slices.Clone(keys), err
	}
	indexer := newListingIndexer(own)
	require.NoError(t, indexer.Add(listingPod("p0", listingOwners[0])))
	var l claim.IndexListing[*v1.Pod]
	for range 3 {
		_, err := l.AppendTo(nil, indexer, listingIndex, ownerKey(listingOwners[0]))
		require.NoError(t, err)
	}
	assert.Equal(t, 3, indexer.reads)
}

// TestIndexListingAppends: the objects go after dst's, and the caller may
// change the result without touching the listing.
func TestIndexListingAppends(t *testing.T) {
	indexer := newListingIndexer(claim.IndexByController)
	p0, p1 := listingPod("p0", listingOwners[0]), listingPod("p1", nil)
	require.NoError(t, indexer.Add(p0))
	require.NoError(t, indexer.Add(p1))
	var own, orphans claim.IndexListing[*v1.Pod]
	for range 2 {
		got, err := own.AppendTo(nil, indexer, listingIndex, ownerKey(listingOwners[0]))
		require.NoError(t, err)
		got, err = orphans.AppendTo(got, indexer, listingIndex, ownerKey(nil))
		require.NoError(t, err)
		require.Equal(t, []*v1.Pod{p0, p1}, got)
		slices.Reverse(got)
		got[0] = nil
		// A result of one listing alone is the caller's too.
		alone, err := own.AppendTo(nil, indexer, listingIndex, ownerKey(listingOwners[0]))
		require.NoError(t, err)
		alone[0] = nil
	}
}

// TestAppendByIndexLeavesOutForeignObjects: an object of another type in
// the index is left out, not a failure of the read.
func TestAppendByIndexLeavesOutForeignObjects(t *testing.T) {
	indexer := newListingIndexer(claim.IndexByController)
	pod := listingPod("p0", listingOwners[0])
	rs := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rs",
		OwnerReferences: []metav1.OwnerReference{*listingOwners[0]}}}
	require.NoError(t, indexer.Add(pod))
	require.NoError(t, indexer.Add(rs))
	got, err := claim.AppendByIndex[*v1.Pod](nil, indexer, listingIndex, ownerKey(listingOwners[0]))
	require.NoError(t, err)
	assert.Equal(t, []*v1.Pod{pod}, got)
	_, err = claim.AppendByIndex[*v1.Pod](nil, indexer, "no-such-index", "x")
	assert.Error(t, err)
}

// TestIndexListingUnderConcurrentWrites reads a key while another
// goroutine writes the store (under -race), and then, the writes over,
// must list exactly what the store holds.
func TestIndexListingUnderConcurrentWrites(t *testing.T) {
	indexer := newListingIndexer(claim.IndexByController)
	key := ownerKey(listingOwners[0])
	done := make(chan struct{})
	go func() {
		defer close(done)
		rng := rand.New(rand.NewPCG(3, 4))
		for i := range 2000 {
			pod := listingPod(fmt.Sprintf("p%d", rng.IntN(8)), listingOwners[rng.IntN(len(listingOwners))])
			if i%50 == 49 {
				_ = indexer.Indexer.Replace([]any{pod}, "")
				continue
			}
			_ = indexer.Indexer.Update(pod)
		}
	}()
	var l claim.IndexListing[*v1.Pod]
	read := func() []*v1.Pod {
		got, err := l.AppendTo(nil, indexer.Indexer, listingIndex, key)
		require.NoError(t, err)
		return got
	}
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			read()
		}
	}
	want, err := indexer.Indexer.ByIndex(listingIndex, key)
	require.NoError(t, err)
	assert.ElementsMatch(t, want, asAny(read()))
}

// TestIndexListingCurrent: a listing is current while its key is unchanged,
// and not once an object of the key changes, the key is emptied by a
// relist, or nothing was ever kept.
func TestIndexListingCurrent(t *testing.T) {
	var never claim.IndexListing[*v1.Pod]
	assert.False(t, never.Current(), "a listing that kept nothing")

	indexer, _, other := ownedAndOther(t)
	var l claim.IndexListing[*v1.Pod]
	_, err := l.AppendTo(nil, indexer, listingIndex, ownerKey(listingOwners[0]))
	require.NoError(t, err)
	assert.True(t, l.Current(), "an unchanged key")
	reads := indexer.reads
	assert.True(t, l.Current())
	assert.Equal(t, reads, indexer.reads, "Current does not list the key")

	changed := listingPod("owned", listingOwners[0])
	changed.Labels = map[string]string{"changed": "yes"}
	require.NoError(t, indexer.Update(changed))
	assert.False(t, l.Current(), "an object of the key changed")

	_, err = l.AppendTo(nil, indexer, listingIndex, ownerKey(listingOwners[0]))
	require.NoError(t, err)
	require.True(t, l.Current())
	require.NoError(t, indexer.Replace([]any{other}, ""))
	assert.False(t, l.Current(), "a relist emptied the key")
}
