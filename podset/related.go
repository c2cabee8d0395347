package podset

import (
	"fmt"
	"hash/maphash"
	"math/bits"
	"reflect"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/podstate"
)

// ownListing is what one sync read and claimed: every pod podsForOwner
// listed (the owner's own and its namespace's orphans), permuted by
// claimPods so that the active pods the owner controls come first, and the
// selector they were claimed with.
type ownListing struct {
	pods     []*v1.Pod
	active   []*v1.Pod // pods[:len(active)]
	selector labels.Selector
}

// rankingRelated returns the related pods a scale-down of o ranks its
// active pods by. When o is its controller's only owner they come from the
// sync's own listing, or from one listing of the namespace
// (relatedOfOnlyOwner); otherwise from upstream's listing of the namespace
// by each sibling's selector (podsOfSiblings). Either way the ranking
// counts the same active pods on each node.
func (c *Controller[O]) rankingRelated(o O, own ownListing) ([]*v1.Pod, error) {
	if c.siblings == nil {
		return nil, nil
	}
	siblings, err := c.siblings.Siblings(o)
	if err != nil {
		return nil, err
	}
	if related, from := c.relatedOfOnlyOwner(o, siblings, own); from != fromNowhere {
		return related, nil
	}
	return c.podsOfSiblings(siblings)
}

// relatedSource says where relatedOfOnlyOwner found the related pods.
type relatedSource int

const (
	fromNowhere      relatedSource = iota // not an only owner, or no namespace index: list as upstream
	fromOwnListing                        // the sync's own listing
	fromNamespaceAll                      // the namespace's pods, listed once
)

// relatedOfOnlyOwner returns the related pods of an owner whose only
// sibling is itself, and where it found them; fromNowhere when o has other
// siblings or the pod informer has no namespace index.
//
// Upstream's related pods for such an owner are the pods of its namespace
// its selector matches, told apart by UID, active or not; the ranking
// counts the active ones on each node. The own listing holds the owner's
// pods and the orphans, but the namespace may also hold pods of other
// controllers that the selector matches. So the namespace's pods are
// counted first: when it holds no more pods than the listing, and the
// listing's UIDs are distinct, nothing is outside the listing (its pods are
// distinct objects of the namespace) and it gives the related pods without
// another pass over the pods: the owner's claimed pods (a claim keeps only
// pods that match) and the active pods it did not keep that match all the
// same (an orphan that vanished while being adopted). Inactive pods are
// left out, as the ranking does not count them. Otherwise the namespace's
// pods, listed for the count, are matched as upstream's lister matches
// them, rather than listed again.
//
// Two pods with one UID (which the API server never yields, but a test's
// cache may hold) count once upstream, and which one counts depends on its
// listing order; such a listing is matched and told apart by UID.
//
// The count and the own listing are read at different times, as upstream
// reads its claim listing and its related listing at different times; with
// a pod cache that does not change during the sync the two sets are equal.
func (c *Controller[O]) relatedOfOnlyOwner(o O, siblings []O, own ownListing) ([]*v1.Pod, relatedSource) {
	if len(siblings) != 1 || siblings[0].GetUID() != o.GetUID() || c.podIndexer == nil {
		return nil, fromNowhere
	}
	// Upstream lists by the sibling's selector; the cache may hold a newer
	// version of the owner than the one this sync claimed with.
	selector, err := c.kind.Selector(siblings[0])
	if err != nil || !reflect.DeepEqual(selector, own.selector) {
		return nil, fromNowhere
	}
	inNamespace, err := c.podIndexer.ByIndex(cache.NamespaceIndex, o.GetNamespace())
	if err != nil {
		// No namespace index on this pod informer.
		return nil, fromNowhere
	}
	// A listing with nil entries counts fewer pods than its length.
	if len(own.pods) >= len(inNamespace) {
		if n, distinct := distinctUIDs(own.pods); distinct && n == len(inNamespace) {
			related := own.active // its capacity is its length: appending copies
			for _, p := range own.pods[len(own.active):] {
				if podstate.IsActive(p) && selector.Matches(labels.Set(p.Labels)) {
					related = append(related, p)
				}
			}
			return related, fromOwnListing
		}
	}
	var seen map[types.UID]struct{}
	var related []*v1.Pod
	for _, obj := range inNamespace {
		p, ok := obj.(*v1.Pod)
		if !ok || !selector.Matches(labels.Set(p.Labels)) {
			continue
		}
		if seen == nil {
			seen = make(map[types.UID]struct{}, len(own.active))
		}
		if _, dup := seen[p.UID]; !dup {
			seen[p.UID] = struct{}{}
			related = append(related, p)
		}
	}
	return related, fromNamespaceAll
}

// podsOfSiblings returns the pods of every sibling owner (upstream's
// getIndirectlyRelatedPods): those each sibling's selector matches in its
// namespace, active or not, each once.
func (c *Controller[O]) podsOfSiblings(siblings []O) ([]*v1.Pod, error) {
	// Pods are told apart by UID, as upstream does, also within one
	// listing. The set is sized by the first listing, usually the owner's
	// own pods and most of the total, so it is not rebuilt as it grows.
	var seen map[types.UID]struct{}
	var out []*v1.Pod
	for _, s := range siblings {
		selector, err := c.kind.Selector(s)
		if err != nil {
			continue
		}
		pods, err := c.podLister.Pods(s.GetNamespace()).List(selector)
		if err != nil {
			return nil, fmt.Errorf("listing pods of %s/%s: %w", s.GetNamespace(), s.GetName(), err)
		}
		if len(pods) == 0 {
			continue
		}
		if seen == nil {
			seen = make(map[types.UID]struct{}, len(pods))
			out = make([]*v1.Pod, 0, len(pods))
		}
		for _, pod := range pods {
			if _, dup := seen[pod.UID]; !dup {
				seen[pod.UID] = struct{}{}
				out = append(out, pod)
			}
		}
	}
	return out, nil
}

// relatedPods returns the pods of every sibling owner (o included), active or
// not, each once, listed as upstream lists them: a scale-down prefers pods
// whose node runs many of them. Without a SiblingLister, or for an owner
// without a controller, there are none, as upstream finds no related pods
// then.
func (c *Controller[O]) relatedPods(o O) ([]*v1.Pod, error) {
	if c.siblings == nil {
		return nil, nil
	}
	siblings, err := c.siblings.Siblings(o)
	if err != nil {
		return nil, err
	}
	return c.podsOfSiblings(siblings)
}

// uidSeed seeds the UID hashes of distinctUIDs.
var uidSeed = maphash.MakeSeed()

// distinctUIDs counts the pods that are not nil and reports whether their
// UIDs are pairwise different. It compares 64-bit hashes in an open
// addressing table, which costs a fraction of a map of the UID strings; two
// different UIDs with one hash make it answer false, which only sends the
// caller down the slower path, so it never answers true wrongly.
func distinctUIDs(pods []*v1.Pod) (n int, distinct bool) {
	size := 1 << bits.Len(uint(2*len(pods))) // at most half full
	table := getHashTable(size)
	defer putHashTable(table)
	mask := uint64(size - 1)
	for _, p := range pods {
		if p == nil {
			continue
		}
		n++
		h := maphash.String(uidSeed, string(p.UID))
		if h == 0 {
			h = 1 // 0 marks an empty slot
		}
		for i := h & mask; ; i = (i + 1) & mask {
			if table[i] == 0 {
				table[i] = h
				break
			}
			if table[i] == h {
				return n, false
			}
		}
	}
	return n, true
}

// hashTables keeps distinctUIDs's tables from one scale-down to the next:
// at ten thousand pods a table is a quarter of a megabyte.
var hashTables sync.Pool

// getHashTable returns an empty table of size slots.
func getHashTable(size int) []uint64 {
	if t, ok := hashTables.Get().(*[]uint64); ok && cap(*t) >= size {
		return (*t)[:size]
	}
	return make([]uint64, size)
}

// putHashTable empties table and keeps it for the next getHashTable.
func putHashTable(table []uint64) {
	clear(table)
	hashTables.Put(&table)
}
