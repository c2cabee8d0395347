package childset

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// A scale-down by the default order reads the deletion facts the claim
// memo kept, not the children: over listings that keep, replace, add,
// drop, reorder, adopt and start deleting children, every claim must hand
// out each active child's facts as the child shows them now.
func TestClaimKeepsEachActiveChildsDeletionFacts(t *testing.T) {
	r := NewReconciler(claimSpec{}, readyKind{}, &objectcontrol.Fake[*v1.ConfigMap]{})
	owner, _ := claimSpec{}.Get("ns", "web")
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	manager := claim.NewObjectControllerRefManager[*v1.ConfigMap](r.patcher(expectations.OwnerKeyFor(owner)), owner, sel,
		claimSpec{}.GroupVersionKind(), r.canAdopt(owner))
	rng := rand.New(rand.NewPCG(7, 8))
	serial := 0
	child := func() *v1.ConfigMap {
		serial++
		cm := listingChild("c"+strconv.Itoa(serial), webRef)
		// UIDs alike in their first 8 bytes, or in all, as well.
		cm.UID = types.UID("uid-0000" + strconv.Itoa(rng.IntN(30)))
		cm.CreationTimestamp = metav1.Unix(int64(rng.IntN(5)), int64(rng.IntN(3)))
		cm.Annotations = map[string]string{}
		if rng.IntN(2) == 0 {
			cm.Annotations["ready"] = "true"
		}
		if rng.IntN(3) == 0 {
			cm.Annotations[DeletionCostAnnotation] = strconv.Itoa(rng.IntN(7) - 3)
		}
		switch rng.IntN(10) {
		case 0: // an orphan the claim adopts
			cm.OwnerReferences = nil
		case 1: // one being deleted
			cm.DeletionTimestamp = &metav1.Time{}
		}
		return cm
	}
	var listing []*v1.ConfigMap
	for range 20 {
		listing = append(listing, child())
	}
	for step := range 200 {
		switch rng.IntN(4) {
		case 0: // a child updated: a new object in its place
			listing[rng.IntN(len(listing))] = child()
		case 1:
			listing = append(listing, child())
		case 2:
			if len(listing) > 1 {
				i := rng.IntN(len(listing))
				listing = slices.Delete(listing, i, i+1)
			}
		case 3: // unchanged, or the same objects in another order
			if rng.IntN(2) == 0 {
				rng.Shuffle(len(listing), func(i, j int) { listing[i], listing[j] = listing[j], listing[i] })
			}
		}
		out, err := r.claimChildren(context.Background(), "ns/web", owner, sel, manager, slices.Clone(listing))
		if err != nil {
			t.Fatal(err)
		}
		facts := out.activeFacts()
		if facts.arena == nil {
			t.Fatalf("step %d: the claim kept no deletion facts for %d active children", step, len(out.active))
		}
		for i, c := range out.active {
			if got, want := *facts.of(int32(i)), deletionFactsOf(c); got != want {
				t.Fatalf("step %d: active child %s has facts %+v, reads %+v", step, c.Name, got, want)
			}
		}
		ready := make([]bool, len(out.active))
		for i, t := range out.traits {
			ready[i] = t.Ready()
		}
		for _, k := range []int{1, len(out.active) / 2, len(out.active)} {
			if got, want := r.deletionOrderOf(out.active, ready, facts, nil, k), r.deletionOrder(out.active, ready, nil, k); !slices.Equal(got, want) {
				t.Fatalf("step %d: first %d by the kept facts %v, by the children %v", step, k, got, want)
			}
		}
		if m, _ := r.claimMemos.Peek("ns/web"); m != nil && len(m.facts) > 2*len(m.verdicts)+64 {
			t.Fatalf("step %d: the memo holds %d facts for %d verdicts", step, len(m.facts), len(m.verdicts))
		}
	}
}

// Facts are kept only for the default order: a caller's order, a Spec
// choosing its victims, or indexed children never read them.
func TestClaimKeepsNoFactsItCannotUse(t *testing.T) {
	for name, opt := range map[string]Option{
		"WithDeletionOrder": WithDeletionOrder(DefaultOrder(readyKind{}.Ready)),
		"WithIndexedNames":  WithIndexedNames(nil),
	} {
		r := NewReconciler(claimSpec{}, readyKind{}, &objectcontrol.Fake[*v1.ConfigMap]{}, opt)
		owner, _ := claimSpec{}.Get("ns", "web")
		sel := labels.SelectorFromSet(labels.Set{"app": "web"})
		manager := claim.NewObjectControllerRefManager[*v1.ConfigMap](r.patcher(expectations.OwnerKeyFor(owner)), owner, sel,
			claimSpec{}.GroupVersionKind(), r.canAdopt(owner))
		listing := []*v1.ConfigMap{listingChild("a", webRef), listingChild("b", webRef)}
		for range 2 {
			out, err := r.claimChildren(context.Background(), "ns/web", owner, sel, manager, listing)
			if err != nil || len(out.active) != 2 || out.activeFacts().arena != nil {
				t.Fatalf("%s: %d active, facts %v, error %v; want 2 active and no facts", name, len(out.active), out.activeFacts(), err)
			}
		}
	}
}
