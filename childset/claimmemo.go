package childset

import (
	"context"
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/ctrlkit/ctrlkit/claim"
)

// A claim memo keeps, per owner, the child objects its last sync's claim
// kept without a write: those already controlled by the owner that its
// selector matches. The next sync meets mostly the same objects and keeps
// them again without reading their owner references and labels, which at
// 10,000 children was most of a steady sync. Every other object (an orphan
// to adopt or pass over, a child to release) goes through the claim.
//
// It is exact because an informer never changes an object it has handed
// out: an update replaces the object, so an unchanged pointer is an
// unchanged child. The memo holds the objects it knows, so none can be
// freed and its address reused while the memo could answer for it; each
// sync keeps only the objects its listing holds. A decision depends on the
// owner's UID and selector too: a change of either starts afresh. A lister
// that returns copies (controller-runtime's cache does) never hits the
// memo: a sync that finds none of the memo's objects empties it and claims
// without it for the next memoRest syncs, so that such a lister costs
// neither the upkeep nor the memory of a copy of every child.
//
// A listing the memo answered for whole is kept too, with what the claim
// made of it: a lister that returns an unchanged listing in the same order
// (IndexerLister does) is claimed the same without a lookup per child.
type claimMemo[C Object] struct {
	uid      types.UID
	selector string
	// kept maps each object kept as it is to whether it is terminating.
	kept map[any]bool
	// resting counts the syncs left that claim without the memo.
	resting int
	// listing is the last sync's listing when every object of it was
	// kept, and active those of them not terminating; nil otherwise.
	listing, active []C
}

// sameListing reports whether candidates are the kept listing's objects,
// in its order.
func (m *claimMemo[C]) sameListing(candidates []C) bool {
	if m.listing == nil || len(candidates) != len(m.listing) {
		return false
	}
	for i, c := range candidates {
		if any(c) != any(m.listing[i]) {
			return false
		}
	}
	return true
}

// memoRest is how many syncs claim without the memo after one found none
// of its objects.
const memoRest = 16

// claimed is what the claim pass leaves: the children the owner controls,
// in input order, those of them not being deleted, and how many are.
type claimed[C Object] struct {
	children    []C
	active      []C
	terminating int
}

func (out *claimed[C]) add(c C, terminating bool) {
	out.children = append(out.children, c)
	if terminating {
		out.terminating++
	} else {
		out.active = append(out.active, c)
	}
}

// claimChildren is claim.ObjectControllerRefManager.Claim with the owner's
// memo, splitting the claimed children into active and terminating as it
// goes. The error aggregates the adoptions and releases that failed; the
// children concerned are left out.
func (r *Reconciler[O, C]) claimChildren(ctx context.Context, key string, owner O, selector labels.Selector,
	manager *claim.ObjectControllerRefManager[C], candidates []C) (claimed[C], error) {
	if reflect.TypeFor[C]().Kind() != reflect.Pointer {
		// Only a pointer names one object: children passed by value
		// are claimed afresh every sync.
		return r.claimAll(ctx, manager, candidates)
	}
	uid, sel := owner.GetUID(), selector.String()
	memo := r.claimMemos.Get(key, func(m *claimMemo[C]) bool { return m.uid == uid && m.selector == sel },
		func() *claimMemo[C] { return &claimMemo[C]{uid: uid, selector: sel} })
	if memo.sameListing(candidates) {
		// Every child was kept as it is last time, and is again. The
		// caller owns what it is given: copies.
		active := slices.Clone(memo.active)
		return claimed[C]{children: slices.Clone(candidates), active: active, terminating: len(candidates) - len(active)}, nil
	}
	memo.listing, memo.active = nil, nil
	if memo.resting > 0 {
		memo.resting--
		return r.claimAll(ctx, manager, candidates)
	}
	out := claimed[C]{children: make([]C, 0, len(candidates)), active: make([]C, 0, len(candidates))}
	// The memo is rebuilt only when this listing differs from the last:
	// in a steady state every candidate hits and the map stays as it is.
	var next map[any]bool
	hits := 0
	var errs []error
	for i, c := range candidates {
		if terminating, known := memo.kept[c]; known {
			out.add(c, terminating)
			hits++
			if next != nil {
				next[c] = terminating
			}
			continue
		}
		if next == nil {
			next = make(map[any]bool, len(candidates))
			for _, seen := range candidates[:i] {
				if t, known := memo.kept[seen]; known {
					next[seen] = t
				}
			}
		}
		ok, err := manager.ClaimOne(ctx, c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue
		}
		terminating := c.GetDeletionTimestamp() != nil
		out.add(c, terminating)
		// An adopted orphan's cached object has no controller reference
		// yet; only a child kept as it is may skip the next claim.
		if ref := metav1.GetControllerOfNoCopy(c); ref != nil && ref.UID == uid {
			next[c] = terminating
		}
	}
	switch {
	case hits == 0 && len(memo.kept) > 0:
		memo.kept, memo.resting = nil, memoRest
	case next != nil:
		memo.kept = next
	case hits < len(memo.kept):
		// Every candidate was known, but some known objects are gone.
		old := memo.kept
		memo.kept = make(map[any]bool, hits)
		for _, c := range candidates {
			memo.kept[c] = old[c]
		}
	}
	if hits == len(candidates) && len(candidates) > 0 {
		// The claim read no child: the next sync may reuse it whole. A
		// copy, as a lister may reuse the slice it returned.
		memo.listing, memo.active = slices.Clone(candidates), slices.Clone(out.active)
	}
	return out, utilerrors.NewAggregate(errs)
}

// claimAll is the claim without a memo.
func (r *Reconciler[O, C]) claimAll(ctx context.Context, manager *claim.ObjectControllerRefManager[C], candidates []C) (claimed[C], error) {
	children, err := manager.Claim(ctx, candidates)
	out := claimed[C]{active: make([]C, 0, len(children))}
	for _, c := range children {
		out.add(c, c.GetDeletionTimestamp() != nil)
	}
	return out, err
}
