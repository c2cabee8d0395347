package podset

import (
	"fmt"
	"hash/maphash"
	"reflect"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/podranking"
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
	// memo is the owner's claim memo when it holds exactly the non-nil
	// pods of pods, else nil.
	memo *claimMemo
	// ranking is the ranking memo the owner's last sync left, nil if none;
	// a scale-down ranks with it and hands it back to memo.
	ranking *podranking.Memo
}

// rankingRelated returns the related pods a scale-down of o ranks its
// active pods by. When o is its controller's only owner they come from the
// sync's own listing, or from one listing of the namespace
// (relatedOfOnlyOwner); otherwise from upstream's listing of the namespace
// by each sibling's selector (podsOfSiblings). Either way the ranking
// counts the same active pods on each node.
func (c *Reconciler[O]) rankingRelated(o O, own ownListing) ([]*v1.Pod, error) {
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
// listed once: when they are the very objects of the own listing
// (sameObjects), nothing is outside it, and it gives the related pods
// without another pass over the pods: the owner's claimed pods (a claim
// keeps only pods that match) and the active pods it did not keep that
// match all the same (an orphan that vanished while being adopted).
// Inactive pods are left out, as the ranking does not count them.
// Otherwise the namespace's pods just listed are matched as upstream's
// lister matches them, rather than listed again.
//
// Comparing objects, not counts, keeps the answer upstream's when the cache
// changes during the sync: upstream lists the related pods after claiming,
// and so does this, so both see the namespace as it is then.
//
// Two pods with one UID (which the API server never yields, but a test's
// cache may hold) count once upstream, and which one counts depends on its
// listing order; such a listing is matched and told apart by UID.
func (c *Reconciler[O]) relatedOfOnlyOwner(o O, siblings []O, own ownListing) ([]*v1.Pod, relatedSource) {
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
	if sameObjects(own, inNamespace) {
		related := own.active // its capacity is its length: appending copies
		for _, p := range own.pods[len(own.active):] {
			if podstate.IsActive(p) && selector.Matches(labels.Set(p.Labels)) {
				related = append(related, p)
			}
		}
		return related, fromOwnListing
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
func (c *Reconciler[O]) podsOfSiblings(siblings []O) ([]*v1.Pod, error) {
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
func (c *Reconciler[O]) relatedPods(o O) ([]*v1.Pod, error) {
	if c.siblings == nil {
		return nil, nil
	}
	siblings, err := c.siblings.Siblings(o)
	if err != nil {
		return nil, err
	}
	return c.podsOfSiblings(siblings)
}

// sameObjects reports whether inNamespace, the namespace's pods listed
// now, holds exactly the pods of own, the sync's earlier listing: the same
// objects, so none was added, removed or replaced in the cache in between
// (an update replaces a cached object, it never changes one), with no two
// of own's pods sharing a UID. nil entries of own are skipped.
func sameObjects(listing ownListing, inNamespace []any) bool {
	if m := listing.memo; m != nil {
		// The memo already holds the listing's pods, and knows whether
		// their UIDs differ unless the pods changed since it last looked,
		// so neither set is built again and no pod is read.
		if len(m.pods) != len(inNamespace) || !m.uniqueUIDs() {
			return false
		}
		for _, obj := range inNamespace {
			p, ok := obj.(*v1.Pod)
			if _, listed := m.pods[p]; !ok || !listed {
				return false
			}
		}
		return true
	}
	own := listing.pods
	n := 0
	for _, p := range own {
		if p != nil {
			n++
		}
	}
	if n != len(inNamespace) {
		return false
	}
	sets := getPodSets(n)
	defer sets.put()
	for _, p := range own {
		if p == nil {
			continue
		}
		// The UIDs are kept as 64-bit hashes, which cost a fraction of
		// the strings as map keys. Two UIDs with one hash look repeated,
		// which only sends the caller down the slower path. A hash
		// already there leaves the set's size as it was.
		sets.uids[maphash.String(uidSeed, string(p.UID))] = struct{}{}
		if len(sets.uids) != len(sets.objects)+1 {
			return false
		}
		sets.objects[p] = struct{}{}
	}
	for _, obj := range inNamespace {
		p, ok := obj.(*v1.Pod)
		if _, listed := sets.objects[p]; !ok || !listed {
			return false
		}
	}
	return true
}

// podSets are sameObjects's sets, kept from one scale-down to the next: a
// cleared map keeps its room, and at ten thousand pods growing the maps
// again, step by step, would cost more than filling them.
type podSets struct {
	objects map[*v1.Pod]struct{}
	uids    map[uint64]struct{} // maphash.String of each UID
	room    int                 // how many pods the maps were made for
}

var (
	listingSets sync.Pool
	uidSeed     = maphash.MakeSeed()
)

// getPodSets returns empty sets with room for n pods.
func getPodSets(n int) *podSets {
	s, _ := listingSets.Get().(*podSets)
	if s == nil || s.room < n {
		s = &podSets{objects: make(map[*v1.Pod]struct{}, n), uids: make(map[uint64]struct{}, n), room: n}
	}
	return s
}

func (s *podSets) put() {
	clear(s.objects)
	clear(s.uids)
	listingSets.Put(s)
}
