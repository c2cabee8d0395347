package childset_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/expectations"
)

// The claim memo answers only for an unchanged object of an unchanged
// owner: a child whose labels changed, and children the owner's new
// selector no longer matches, are claimed again, and released.
func TestClaimMemoNeverAnswersForAChange(t *testing.T) {
	e := newEnv(t)
	rs := newOwner("web", 3)
	e.addOwner(rs)
	web := map[string]string{"app": "web"}
	e.seed(newChild("a", rs, web), newChild("b", rs, web), newChild("c", rs, web))
	e.reconcile("web")
	e.reconcile("web")
	if w := e.writes(); len(w) != 0 {
		t.Fatalf("steady syncs wrote %v", w)
	}

	relabelled := newChild("a", rs, map[string]string{"app": "other"})
	if err := e.children.Update(relabelled); err != nil {
		t.Fatal(err)
	}
	e.reconcile("web")
	if got := e.writes(); countPrefix(got, "patch a") != 1 || countPrefix(got, "patch ") != 1 {
		t.Fatalf("after relabelling a: writes %v, want one release patch of a", got)
	}

	moved := rs.DeepCopy()
	moved.Spec.Selector.MatchLabels = map[string]string{"app": "moved"}
	moved.Spec.Template.Labels = map[string]string{"app": "moved"}
	if err := e.owners.Update(moved); err != nil {
		t.Fatal(err)
	}
	// The creates that replaced a are not observed here; let them go.
	e.r.Expectations().DeleteExpectations(expectations.OwnerKeyFor(rs))
	e.reconcile("web")
	if got := e.writes(); countPrefix(got, "patch b") != 1 || countPrefix(got, "patch c") != 1 {
		t.Fatalf("after the selector moved: writes %v, want release patches of b and c", got)
	}
}

// copyingKind lists copies of the cached children, as controller-runtime's
// cache does.
type copyingKind struct{ cmKind }

func (k copyingKind) ListControlledBy(namespace string, controller *metav1.OwnerReference) ([]*v1.ConfigMap, error) {
	cms, err := k.cmKind.ListControlledBy(namespace, controller)
	for i := range cms {
		cms[i] = cms[i].DeepCopy()
	}
	return cms, err
}

// With a lister that returns copies, the memo never answers, and every
// sync still claims right: the steady state writes nothing, and a child
// that stops matching is released, whichever sync meets it.
func TestClaimMemoWithACopyingLister(t *testing.T) {
	for _, at := range []int{1, 2, 5, 20} {
		e := newEnv(t)
		e.r = childset.NewReconciler(rsSpec{e.owners}, copyingKind{cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}},
			configMapControl(e.client, nil), childset.WithEventRecorder(e.recorder), childset.WithClock(e.clock))
		rs := newOwner("web", 2)
		e.addOwner(rs)
		web := map[string]string{"app": "web"}
		e.seed(newChild("a", rs, web), newChild("b", rs, web), newChild("c", rs, map[string]string{"app": "web", "x": "y"}))
		// Three children for two wanted: scale down once, then hold the
		// expectation so that later syncs only claim.
		e.reconcile("web")
		if got := countPrefix(e.writes(), "delete "); got != 1 {
			t.Fatalf("writes %v, want one delete", e.writes())
		}
		for range at {
			e.reconcile("web")
		}
		if got := len(e.writes()); got != 1 {
			t.Fatalf("after %d claiming syncs: writes %v, want only the delete", at, e.writes())
		}
		if err := e.children.Update(newChild("a", rs, map[string]string{"app": "other"})); err != nil {
			t.Fatal(err)
		}
		e.reconcile("web")
		if got := e.writes(); countPrefix(got, "patch a") != 1 {
			t.Fatalf("after %d claiming syncs and relabelling a: writes %v, want a released", at, got)
		}
	}
}
