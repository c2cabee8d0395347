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

// A claim memo keeps, per owner, what its syncs' claim passes decided for
// each child object without a write: the child is the owner's and active
// (with its Traits), the owner's and being deleted, or nothing to the
// owner (another's, finished, or an orphan the selector does not match).
// The next sync meets mostly the same objects and reuses those decisions
// without reading the children, which at 10,000 children was most of a
// steady sync: owner references, labels and status are a dozen cache
// misses, a lookup by pointer is one. An object that needs a write (an
// orphan to adopt, a child to release) always goes through the claim.
//
// It is exact because an informer never changes an object it has handed
// out: an update replaces the object, so an unchanged pointer is an
// unchanged child. The memo holds the objects it knows, so none can be
// freed and its address reused while the memo could answer for it; each
// sync keeps only the objects its listing holds. A decision depends on the
// owner's UID, selector and traits key too: a change of any starts afresh.
// A lister that returns copies (controller-runtime's cache does) never hits
// the memo: a sync that finds none of the memo's objects empties it and
// claims without it for the next memoRest syncs, so that such a lister
// costs neither the upkeep nor the memory of a copy of every child.
//
// A listing the memo answered for whole is kept too, with what the claim
// made of it: a lister that returns an unchanged listing in the same order
// (IndexerLister does) is claimed the same without a lookup per child.
type claimMemo[C Object] struct {
	uid       types.UID
	selector  string
	traitsKey string
	verdicts  map[any]verdict
	// resting counts the syncs left that claim without the memo.
	resting int
	// listing is the last sync's listing when every object of it had a
	// verdict, and out what the claim made of it; nil otherwise.
	listing []C
	out     claimed[C]
	// facts holds the deletion facts of the active children judged, at
	// their verdicts' fact, when the core deletes by the default order. A
	// child replaced leaves its entry behind until compactFacts.
	facts []deletionFacts
}

// verdict is one decision of the claim pass.
type verdict struct {
	kind   verdictKind
	traits Traits // of an active child
	// fact is where an active child's deletion facts are in the memo's
	// facts, when the claim keeps them (withFacts): a scale-down then
	// reads no child the memo knows. An index, not the facts, so that the
	// verdicts stay as small as they were: a sync after any child changed
	// copies them all.
	fact int32
}

type verdictKind uint8

const (
	verdictNone        verdictKind = iota // nothing to this owner
	verdictActive                         // controlled, selected and active
	verdictTerminating                    // controlled, selected and being deleted
)

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

// claimed is what the claim pass leaves: the children the owner controls
// and selects (finished ones aside), in input order; those of them that
// are active, with their traits and, when withFacts, their deletion
// facts; and those being deleted.
type claimed[C Object] struct {
	children    []C
	active      []C
	traits      []Traits
	terminating []C
	// facts.of(i) are active[i]'s when withFacts is set. Nothing writes
	// them after the claim pass, so the memo's copy and a sync's share
	// them.
	facts     factsView
	withFacts bool
}

func (out *claimed[C]) add(c C, v verdict) {
	switch v.kind {
	case verdictActive:
		out.children = append(out.children, c)
		out.active = append(out.active, c)
		out.traits = append(out.traits, v.traits)
		if out.withFacts {
			out.facts.at = append(out.facts.at, v.fact)
		}
	case verdictTerminating:
		out.children = append(out.children, c)
		out.terminating = append(out.terminating, c)
	}
}

// clone is a copy the caller owns, but for the facts, which are only read.
func (out claimed[C]) clone() claimed[C] {
	return claimed[C]{children: slices.Clone(out.children), active: slices.Clone(out.active),
		traits: slices.Clone(out.traits), terminating: slices.Clone(out.terminating),
		facts: out.facts, withFacts: out.withFacts}
}

// activeFacts returns the facts of the active children, the zero view
// when the claim pass did not keep them.
func (out *claimed[C]) activeFacts() factsView {
	if !out.withFacts || len(out.facts.at) != len(out.active) {
		return factsView{}
	}
	return out.facts
}

// claimChildren sorts candidates as upstream's ReplicaSet sorts its pods:
// a finished child is left alone; one being deleted is counted when the
// owner controls it and its selector matches it, and never adopted or
// released; an active one is claimed (claim.ObjectControllerRefManager),
// adopting a matching orphan and releasing a controlled child the selector
// no longer matches. It reads each child once, through the owner's claim
// memo. The error aggregates the adoptions and releases that failed; the
// children concerned are left out.
func (r *Reconciler[O, C]) claimChildren(ctx context.Context, key string, owner O, selector labels.Selector,
	manager *claim.ObjectControllerRefManager[C], candidates []C) (claimed[C], error) {
	uid, sel, traitsKey := owner.GetUID(), selector.String(), r.traitsKey(owner)
	var memo *claimMemo[C]
	// Only a pointer names one object: children passed by value are
	// judged afresh every sync.
	if reflect.TypeFor[C]().Kind() == reflect.Pointer {
		memo = r.claimMemos.Get(key, func(m *claimMemo[C]) bool {
			return m.uid == uid && m.selector == sel && m.traitsKey == traitsKey
		}, func() *claimMemo[C] { return &claimMemo[C]{uid: uid, selector: sel, traitsKey: traitsKey} })
		if memo.sameListing(candidates) {
			// Every child was judged as it is last time.
			return memo.out.clone(), nil
		}
		memo.listing, memo.out = nil, claimed[C]{}
		if memo.resting > 0 {
			memo.resting--
			memo = nil
		}
	}
	out := claimed[C]{children: make([]C, 0, len(candidates)), active: make([]C, 0, len(candidates)),
		traits: make([]Traits, 0, len(candidates))}
	// The facts are kept only where the memo keeps them: without it every
	// sync would read them of every child, which only a scale-down uses.
	var facts *[]deletionFacts
	if memo != nil && r.ordersByFacts() {
		out.withFacts = true
		out.facts.at = make([]int32, 0, len(candidates))
		facts = &memo.facts
	}
	traitsOf := r.traitReader(owner)
	var known map[any]verdict
	if memo != nil {
		known = memo.verdicts
	}
	// The memo is rebuilt only when this listing differs from the last:
	// in a steady state every candidate hits and the map stays as it is.
	var next map[any]verdict
	hits := 0
	var errs []error
	for i, c := range candidates {
		if v, ok := known[c]; ok {
			out.add(c, v)
			hits++
			if next != nil {
				next[c] = v
			}
			continue
		}
		if memo != nil && next == nil {
			next = make(map[any]verdict, len(candidates))
			for _, seen := range candidates[:i] {
				if v, ok := known[seen]; ok {
					next[seen] = v
				}
			}
		}
		v, judged := r.judge(uid, selector, traitsOf, facts, c)
		if !judged {
			// An adoption or a release: the claim writes, and the next
			// sync judges the object the write produces.
			owned, err := manager.ClaimOne(ctx, c)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if owned {
				v := verdict{kind: verdictActive, traits: traitsOf(c)}
				if facts != nil {
					v.fact = addFacts(facts, c)
				}
				out.add(c, v)
			}
			continue
		}
		out.add(c, v)
		if next != nil {
			next[c] = v
		}
	}
	if memo != nil {
		// This sync's view ends where its appends did: later ones lie
		// beyond it.
		out.facts.arena = memo.facts
		switch {
		case hits == 0 && len(memo.verdicts) > 0:
			memo.verdicts, memo.resting, memo.facts = nil, memoRest, nil
		case next != nil:
			memo.verdicts = next
		case hits < len(memo.verdicts):
			// Every candidate was known, but some known objects are gone.
			old := memo.verdicts
			memo.verdicts = make(map[any]verdict, hits)
			for _, c := range candidates {
				memo.verdicts[c] = old[c]
			}
		}
		if hits == len(candidates) && len(candidates) > 0 {
			// The claim read no child: the next sync may reuse it whole.
			// Copies, as a lister may reuse the slice it returned.
			memo.listing, memo.out = slices.Clone(candidates), out.clone()
		}
		memo.compactFacts()
	}
	return out, utilerrors.NewAggregate(errs)
}

// addFacts appends child's deletion facts to facts and returns where.
func addFacts[C Object](facts *[]deletionFacts, child C) int32 {
	*facts = append(*facts, deletionFactsOf(child))
	return int32(len(*facts) - 1)
}

// compactFacts copies the facts of the children still known into a new
// arena once the others' outnumber them: views of the old one, this
// sync's and the kept listing's, stay true. Waiting until then keeps its
// cost, over time, to a copy per entry appended.
func (m *claimMemo[C]) compactFacts() {
	if len(m.facts) <= 2*len(m.verdicts)+64 {
		return
	}
	live := make([]deletionFacts, 0, len(m.verdicts))
	for c, v := range m.verdicts {
		if v.kind == verdictActive {
			live = append(live, m.facts[v.fact])
			v.fact = int32(len(live) - 1)
			m.verdicts[c] = v
		}
	}
	m.facts = live
}

// judge decides for child what the claim pass does when that takes no
// write; judged is false when the claim must run (an orphan the selector
// matches, or a controlled child it no longer matches). An active child's
// deletion facts are appended to facts unless it is nil.
func (r *Reconciler[O, C]) judge(uid types.UID, selector labels.Selector, traitsOf func(C) Traits, facts *[]deletionFacts, child C) (v verdict, judged bool) {
	if r.finished(child) {
		return verdict{}, true
	}
	ref := metav1.GetControllerOfNoCopy(child)
	if child.GetDeletionTimestamp() != nil {
		if ref != nil && ref.UID == uid && selector.Matches(labels.Set(child.GetLabels())) {
			v.kind = verdictTerminating
		}
		return v, true
	}
	if ref != nil && ref.UID != uid {
		return verdict{}, true
	}
	if !selector.Matches(labels.Set(child.GetLabels())) {
		// An orphan it does not select is nothing to the owner; a child
		// it controls but no longer selects is released.
		return verdict{}, ref == nil
	}
	if ref == nil {
		return verdict{}, false
	}
	v = verdict{kind: verdictActive, traits: traitsOf(child)}
	if facts != nil {
		v.fact = addFacts(facts, child)
	}
	return v, true
}
