package podset

import (
	"maps"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/internal/ownermemo"
	"github.com/ctrlkit/ctrlkit/podranking"
	"github.com/ctrlkit/ctrlkit/podstate"
	"github.com/ctrlkit/ctrlkit/status"
)

// A claim memo keeps, per owner, what the claim pass decided for each pod
// object it read, whenever that decision took no write: the pod is this
// owner's and selected (kept, and counted in a class), or terminating and
// this owner's, or nothing to this owner. The next sync of the owner meets
// mostly the same objects and reuses those decisions without reading the
// pods, which on a large owner is most of a steady sync: a pod's phase,
// owner references, labels and conditions are a dozen cache misses, a
// lookup by pointer is one.
//
// It is exact because the informer never changes an object it has handed
// out: an update replaces the pointer in the store, so an unchanged pointer
// is an unchanged pod. The memo holds the pointers it knows, so none of
// those objects can be freed and its address reused by another pod while
// the memo could still answer for it; each sync drops the pods the owner's
// listing no longer holds. A decision also depends on the owner's selector,
// its template's labels (for the count) and whether the sync counts at all;
// a change of any of them starts the memo afresh. Pods that need a write
// (adoption, release) always go through the claim itself.
type claimMemo struct {
	uid            types.UID
	selector       string
	templateLabels map[string]string
	counting       bool
	pods           map[*v1.Pod]podVerdict
	// ranking keeps the facts the last scale-down's ranking read from the
	// pods. It lives from one scale-down sync to the next only: every sync
	// takes it out (takeRanking), and only a sync that ranks puts it back,
	// so an owner that stops scaling down keeps no old pods through it.
	ranking *podranking.Memo
	// uids says whether the UIDs of the pods in pods are all different
	// (uidsUnique), not (uidsRepeated) or not known since pods changed.
	uids uidState
}

type uidState uint8

const (
	uidsUnknown uidState = iota
	uidsUnique
	uidsRepeated
)

// takeRanking returns the ranking memo, nil if none, and leaves none.
func (m *claimMemo) takeRanking() *podranking.Memo {
	r := m.ranking
	m.ranking = nil
	return r
}

// add records the verdict of a pod the memo did not know.
func (m *claimMemo) add(pod *v1.Pod, v podVerdict) {
	m.pods[pod] = v
	m.uids = uidsUnknown
}

// podVerdict is one memoised decision.
type podVerdict struct {
	kind  verdictKind
	class status.PodClass // for verdictOwned when counting
}

type verdictKind uint8

const (
	verdictNone        verdictKind = iota // nothing to this owner
	verdictOwned                          // active, controlled by the owner and selected: kept
	verdictTerminating                    // terminating, controlled by the owner and selected
)

// ownerMemos holds, by queue key, each owner's claim memo and pod listing
// (podsForOwner), both with the owner's UID, so that a re-created owner of
// the same name starts afresh. Both are dropped when their owner is
// deleted, and when a sync finds the owner gone or held by another replica
// (WithSyncGuard), so that none outlives the owner's syncs here and holds
// on to its pods. Only the owner's sync uses them until the sync ends, and
// the queue never syncs one key on two workers at once.
type ownerMemos struct {
	claims   ownermemo.Store[*claimMemo]
	listings ownermemo.Store[*podListing]
}

// podListing is an owner's last listing of its pods and of its namespace's
// orphans.
type podListing struct {
	uid            types.UID
	owned, orphans claim.IndexListing[*v1.Pod]
}

// claim returns the claim memo of the owner with queue key key and uid,
// valid for selector, templateLabels and counting.
func (ms *ownerMemos) claim(key string, uid types.UID, selector labels.Selector, templateLabels map[string]string, counting bool) *claimMemo {
	sel := selector.String()
	return ms.claims.Get(key, func(m *claimMemo) bool {
		return m.uid == uid && m.selector == sel && m.counting == counting && maps.Equal(m.templateLabels, templateLabels)
	}, func() *claimMemo {
		return &claimMemo{uid: uid, selector: sel, templateLabels: maps.Clone(templateLabels), counting: counting, pods: map[*v1.Pod]podVerdict{}}
	})
}

// listing returns the pod listing of the owner with queue key key and uid.
func (ms *ownerMemos) listing(key string, uid types.UID) *podListing {
	return ms.listings.Get(key, func(l *podListing) bool { return l.uid == uid }, func() *podListing { return &podListing{uid: uid} })
}

// drop forgets the claim memo and the pod listing of the owner with queue
// key key.
func (ms *ownerMemos) drop(key string) {
	ms.claims.Drop(key)
	ms.listings.Drop(key)
}

// judge decides for pod what the claim pass would, reading the pod, when
// the decision needs no write; ok is false when the claim must run (an
// orphan the selector matches, or an owned pod it no longer matches).
func judge(pod *v1.Pod, uid types.UID, selector labels.Selector, counter *status.ReplicaCounter) (v podVerdict, ok bool) {
	switch {
	case podstate.IsActive(pod):
		ref := metav1.GetControllerOfNoCopy(pod)
		if ref != nil && ref.UID != uid {
			return podVerdict{}, true
		}
		if !selector.Matches(labels.Set(pod.Labels)) {
			// An orphan it does not select is nothing to the owner; a pod
			// it owns but no longer selects is released.
			return podVerdict{}, ref == nil
		}
		if ref == nil {
			return podVerdict{}, false
		}
		v.kind = verdictOwned
		if counter != nil {
			v.class = counter.Classify(pod)
		}
		return v, true
	case podstate.IsTerminating(pod):
		if ref := metav1.GetControllerOfNoCopy(pod); ref != nil && ref.UID == uid && selector.Matches(labels.Set(pod.Labels)) {
			v.kind = verdictTerminating
		}
		return v, true
	default:
		return podVerdict{}, true
	}
}

// prune keeps only the verdicts of pods, the owner's listing of this sync,
// once the memo holds more pods than the sync met (known of them).
func (m *claimMemo) prune(pods []*v1.Pod, known int) {
	if len(m.pods) <= known {
		return
	}
	kept := make(map[*v1.Pod]podVerdict, known)
	for _, p := range pods {
		if v, ok := m.pods[p]; ok {
			kept[p] = v
		}
	}
	m.pods = kept
	m.uids = uidsUnknown
}

// uniqueUIDs reports whether no two pods of the memo share a UID, reading
// the UIDs only when its pods changed since the last answer.
func (m *claimMemo) uniqueUIDs() bool {
	if m.uids == uidsUnknown {
		m.uids = uidsUnique
		seen := make(map[types.UID]struct{}, len(m.pods))
		for p := range m.pods {
			if _, dup := seen[p.UID]; dup {
				m.uids = uidsRepeated
				break
			}
			seen[p.UID] = struct{}{}
		}
	}
	return m.uids == uidsUnique
}
