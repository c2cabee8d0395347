package childset_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/expectations"
)

// A cache that does not show the core's creates must not make it create
// again: the creations are expected until observed or expired.
func TestInterchangeableLaggingCacheCreatesExactlyN(t *testing.T) {
	e := newEnv(t)
	e.addOwner(newOwner("web", 5))
	first := e.reconcile("web")
	if first.RequeueAfter != 0 {
		t.Errorf("first sync asked for a requeue after %v", first.RequeueAfter)
	}
	for i := range 10 {
		res := e.reconcile("web")
		if res.RequeueAfter <= 0 || res.RequeueAfter > expectations.ExpectationsTimeout+time.Millisecond {
			t.Fatalf("sync %d on a lagging cache: RequeueAfter = %v, want the time left until the expectations expire, and a millisecond past", i, res.RequeueAfter)
		}
	}
	if got := countPrefix(e.writes(), "create "); got != 5 {
		t.Fatalf("creates = %d, want exactly 5: %v", got, e.writes())
	}
	if got := len(e.apiChildren()); got != 5 {
		t.Fatalf("API holds %d children, want 5", got)
	}
	e.catchUp()
	if res := e.reconcile("web"); res.RequeueAfter != 0 {
		t.Errorf("caught-up sync asked for a requeue after %v", res.RequeueAfter)
	}
	if got := countPrefix(e.writes(), "create "); got != 5 {
		t.Fatalf("creates after catching up = %d, want still 5", got)
	}
	for _, cm := range e.apiChildren() {
		if !strings.HasPrefix(cm.Name, "web-") || metav1.GetControllerOf(cm) == nil || metav1.GetControllerOf(cm).UID != "web-uid" {
			t.Errorf("child %s: want a generated name web-* controlled by web, got refs %v", cm.Name, cm.OwnerReferences)
		}
	}
}

// Indexed mode fills the lowest missing indices, and a lagging cache never
// leads to a second child for an index, even once the expectations expire.
func TestIndexedLaggingCacheFillsLowestNeverDuplicates(t *testing.T) {
	e := newEnv(t, childset.WithIndexedNames(nil), childset.WithBurstReplicas(2))
	owner := newOwner("web", 5)
	e.addOwner(owner)
	e.seed(newChild("web-1", owner, map[string]string{"app": "web", childset.IndexLabel: "1"}))

	e.reconcile("web")
	if got, want := e.writes(), []string{"create web-0", "create web-2"}; !slices.Equal(got, want) {
		t.Fatalf("first sync wrote %v, want %v (lowest missing first, burst 2)", got, want)
	}
	for range 5 {
		e.reconcile("web")
	}
	if got := countPrefix(e.writes(), "create "); got != 2 {
		t.Fatalf("lagging cache: %d creates, want 2: %v", got, e.writes())
	}
	// The cache still lags when the expectations expire: the core tries
	// web-0 and web-2 again, the API refuses, and no second one appears.
	e.clock.Step(expectations.ExpectationsTimeout + time.Second)
	res := e.reconcile("web")
	if want := names("web", 0, 1, 2); !slices.Equal(e.apiNames(), want) {
		t.Fatalf("API holds %v, want %v", e.apiNames(), want)
	}
	if res.RequeueAfter != childset.DefaultNameConflictRetry {
		t.Errorf("RequeueAfter = %v, want the name-conflict retry", res.RequeueAfter)
	}
	if evs := e.events(); countPrefix(evs, "Warning "+childset.ReasonNameConflict) != 2 {
		t.Errorf("events %v, want a NameConflict for web-0 and web-2", evs)
	}
	e.catchUp()
	e.reconcile("web")
	if want := names("web", 0, 1, 2, 3, 4); !slices.Equal(e.apiNames(), want) {
		t.Fatalf("after catching up the API holds %v, want %v", e.apiNames(), want)
	}
	for _, cm := range e.apiChildren() {
		if cm.Labels[childset.IndexLabel] != strings.TrimPrefix(cm.Name, "web-") {
			t.Errorf("%s has index label %q", cm.Name, cm.Labels[childset.IndexLabel])
		}
	}
}

func TestIndexedScaleDownDeletesHighestFirst(t *testing.T) {
	e := newEnv(t, childset.WithIndexedNames(nil), childset.WithBurstReplicas(2))
	owner := newOwner("web", 5)
	e.addOwner(owner)
	for i := range 5 {
		e.seed(newChild(names("web", i)[0], owner, map[string]string{"app": "web", childset.IndexLabel: names("", i)[0][1:]}))
	}
	owner = owner.DeepCopy()
	*owner.Spec.Replicas = 2
	if err := e.owners.Update(owner); err != nil {
		t.Fatal(err)
	}
	e.reconcile("web")
	if got, want := sortedWrites(e.writes()), []string{"delete web-3", "delete web-4"}; !slices.Equal(got, want) {
		t.Fatalf("first scale-down pass wrote %v, want %v", got, want)
	}
	e.reconcile("web") // deletions not observed yet: nothing
	if got := countPrefix(e.writes(), "delete "); got != 2 {
		t.Fatalf("lagging cache: %d deletes, want 2", got)
	}
	e.catchUp()
	e.reconcile("web")
	if want := names("web", 0, 1); !slices.Equal(e.apiNames(), want) {
		t.Fatalf("API holds %v, want %v", e.apiNames(), want)
	}
}

// A name held by an object the owner does not control is never created
// twice: the core records why and asks to be retried.
func TestIndexedForeignHolderEventAndRequeue(t *testing.T) {
	for _, tc := range []struct {
		name   string
		holder func() *v1.ConfigMap
	}{
		{"controlled by another owner", func() *v1.ConfigMap {
			return newChild("web-0", newOwner("other", 1), map[string]string{"app": "web"})
		}},
		{"orphan that does not match", func() *v1.ConfigMap {
			return newChild("web-0", nil, map[string]string{"app": "something-else"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, childset.WithIndexedNames(nil))
			e.addOwner(newOwner("web", 1))
			e.seed(tc.holder())
			res := e.reconcile("web")
			if got := e.writes(); len(got) != 0 {
				t.Fatalf("writes %v, want none", got)
			}
			if res.RequeueAfter != childset.DefaultNameConflictRetry {
				t.Errorf("RequeueAfter = %v, want %v", res.RequeueAfter, childset.DefaultNameConflictRetry)
			}
			evs := e.events()
			if len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning "+childset.ReasonNameConflict) || !strings.Contains(evs[0], `"web-0"`) {
				t.Fatalf("events %v, want one NameConflict naming web-0", evs)
			}
		})
	}
}

func TestIndexedOrphanHoldingWantedNameIsAdopted(t *testing.T) {
	e := newEnv(t, childset.WithIndexedNames(nil))
	e.addOwner(newOwner("web", 2))
	e.seed(newChild("web-0", nil, map[string]string{"app": "web"}))
	e.reconcile("web")
	if got, want := e.writes(), []string{"patch web-0", "create web-1"}; !slices.Equal(got, want) {
		t.Fatalf("writes %v, want %v", got, want)
	}
	for _, cm := range e.apiChildren() {
		if ref := metav1.GetControllerOf(cm); ref == nil || ref.UID != "web-uid" {
			t.Errorf("%s: controller %v, want web", cm.Name, ref)
		}
	}
}

func TestRefusedSelectorWritesNothing(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		mutate       func(*metav1.LabelSelector)
	}{
		{"mismatch", childset.ReasonSelectorMismatch, func(s *metav1.LabelSelector) { s.MatchLabels = map[string]string{"app": "db"} }},
		{"empty", childset.ReasonSelectorInvalid, func(s *metav1.LabelSelector) { s.MatchLabels = nil }},
		{"malformed", childset.ReasonSelectorInvalid, func(s *metav1.LabelSelector) {
			s.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}
		}},
	} {
		for _, indexed := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				var opts []childset.Option
				if indexed {
					opts = append(opts, childset.WithIndexedNames(nil))
				}
				e := newEnv(t, opts...)
				owner := newOwner("web", 3)
				tc.mutate(owner.Spec.Selector)
				e.addOwner(owner)
				// An orphan the bad selector would match: not adopted either.
				e.seed(newChild("stray", nil, map[string]string{"app": "db"}))
				res := e.reconcile("web")
				if got := e.writes(); len(got) != 0 {
					t.Fatalf("writes %v, want none", got)
				}
				if res.RequeueAfter != 0 {
					t.Errorf("RequeueAfter = %v, want 0: only a change of the owner can help", res.RequeueAfter)
				}
				if evs := e.events(); len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning "+tc.reason) {
					t.Fatalf("events %v, want one %s warning", evs, tc.reason)
				}
			})
		}
	}
}

// Interchangeable scale-down follows the deletion order, and a
// replacement order is used instead when given.
func TestInterchangeableScaleDownOrder(t *testing.T) {
	build := func(e *env) {
		owner := newOwner("web", 1)
		e.addOwner(owner)
		lbl := map[string]string{"app": "web"}
		ready := newChild("ready", owner, lbl)
		ready.Annotations = map[string]string{"ready": "true"}
		notReady := newChild("not-ready", owner, lbl)
		cheap := newChild("cheap", owner, lbl)
		cheap.Annotations = map[string]string{"ready": "true", childset.DeletionCostAnnotation: "-5"}
		e.seed(ready, notReady, cheap)
	}
	e := newEnv(t)
	build(e)
	e.reconcile("web")
	if got, want := sortedWrites(e.writes()), []string{"delete cheap", "delete not-ready"}; !slices.Equal(got, want) {
		t.Fatalf("default order deleted %v, want %v", got, want)
	}
	byName := func(a, b *v1.ConfigMap) int { return strings.Compare(b.Name, a.Name) } // z first
	e = newEnv(t, childset.WithDeletionOrder(childset.Order[*v1.ConfigMap](byName)))
	build(e)
	e.reconcile("web")
	if got, want := sortedWrites(e.writes()), []string{"delete not-ready", "delete ready"}; !slices.Equal(got, want) {
		t.Fatalf("replaced order deleted %v, want %v", got, want)
	}
}

func TestOwnerGoneAndBadKeyAreNotErrors(t *testing.T) {
	e := newEnv(t)
	for _, key := range []string{"default/missing", "a/b/c", ""} {
		if res := e.reconcile(strings.TrimPrefix(key, ns+"/")); res != (childset.Result{}) {
			t.Errorf("%q: %+v", key, res)
		}
	}
	if got := e.writes(); len(got) != 0 {
		t.Fatalf("writes %v", got)
	}
}

func sortedWrites(w []string) []string {
	w = slices.Clone(w)
	slices.Sort(w)
	return w
}

// A failed adoption stops the sync: the orphan holding web-0 must not be
// taken for a foreign object, nor replaced in interchangeable mode.
func TestFailedAdoptionCreatesNothing(t *testing.T) {
	for _, indexed := range []bool{false, true} {
		var opts []childset.Option
		if indexed {
			opts = append(opts, childset.WithIndexedNames(nil))
		}
		e := newEnv(t, opts...)
		e.client.PrependReactor("patch", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewInternalError(errors.New("boom"))
		})
		e.addOwner(newOwner("web", 1))
		e.seed(newChild("web-0", nil, map[string]string{"app": "web"}))
		if _, err := e.r.Reconcile(context.Background(), ns+"/web"); err == nil {
			t.Fatalf("indexed=%v: Reconcile returned nil after a failed adoption", indexed)
		}
		if got := e.writes(); !slices.Equal(got, []string{"patch web-0"}) {
			t.Fatalf("indexed=%v: writes %v, want only the failed adoption", indexed, got)
		}
		if evs := e.events(); len(evs) != 0 {
			t.Errorf("indexed=%v: events %v, want none", indexed, evs)
		}
	}
}

// Reconciles of different owners may run at once (a driver's workers);
// the race detector checks the shared state.
func TestConcurrentReconcilesOfDifferentOwners(t *testing.T) {
	e := newEnv(t, childset.WithIndexedNames(nil))
	owners := []string{"a", "b", "c", "d"}
	for _, name := range owners {
		e.addOwner(newOwner(name, 3))
	}
	var wg sync.WaitGroup
	for _, name := range owners {
		wg.Go(func() {
			for range 3 {
				if _, err := e.r.Reconcile(context.Background(), ns+"/"+name); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		})
	}
	wg.Wait()
	if got := len(e.apiNames()); got != 12 {
		t.Fatalf("API holds %d children, want 12: %v", got, e.apiNames())
	}
}
