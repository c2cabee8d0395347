package childset_test

import (
	"testing"

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
