package childset_test

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"

	"github.com/ctrlkit/ctrlkit/childset"
)

// deleteFirstAnnotation is where the tests' owners list the children to
// delete first, comma-separated, as a CloneSet lists podsToDelete.
const deleteFirstAnnotation = "test.ctrlkit.io/delete-first"

// scaleInSpec is rsSpec with ScaleInSpec, read from the owner's annotation.
type scaleInSpec struct{ rsSpec }

func (scaleInSpec) ChildrenToDeleteFirst(rs *appsv1.ReplicaSet) []string {
	if v := rs.Annotations[deleteFirstAnnotation]; v != "" {
		return strings.Split(v, ",")
	}
	return nil
}

var _ childset.ScaleInSpec[*appsv1.ReplicaSet] = scaleInSpec{}

// newScaleInEnv is newEnv whose Spec names children through the owner's
// annotation.
func newScaleInEnv(t *testing.T, opts ...childset.Option) *env {
	t.Helper()
	e := newEnv(t, opts...)
	e.r = childset.NewReconciler(scaleInSpec{rsSpec{e.owners}}, cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)},
		configMapControl(e.client, nil),
		append([]childset.Option{childset.WithEventRecorder(e.recorder), childset.WithClock(e.clock)}, opts...)...)
	return e
}

// seedReady seeds ready children of owner, which the default order deletes
// last, so only names can make them go first.
func (e *env) seedReady(owner *appsv1.ReplicaSet, lbls map[string]string, names ...string) {
	e.t.Helper()
	for _, name := range names {
		cm := newChild(name, owner, lbls)
		cm.Annotations = map[string]string{"ready": "true"}
		e.seed(cm)
	}
}

func TestInterchangeableScaleDownDeletesNamedFirst(t *testing.T) {
	for _, tc := range []struct {
		name        string
		deleteFirst string
		burst       int
		want        []string
	}{
		{name: "exactly the named", deleteFirst: "b,d", want: []string{"delete b", "delete d"}},
		// Bad data is ignored: an empty name, a name listed twice, one no
		// child has, another owner's child.
		{name: "bad data ignored", deleteFirst: ",b,,b,gone,other-0,d", want: []string{"delete b", "delete d"}},
		// Fewer named than to delete: the rest follow the deletion order,
		// which puts the not-ready child first.
		{name: "then the deletion order", deleteFirst: "b", want: []string{"delete b", "delete not-ready"}},
		// More named than to delete: among them, the deletion order (the
		// lower deletion cost goes first).
		{name: "among the named, the deletion order", deleteFirst: "a,b,cheap", want: []string{"delete cheap"}},
		// The burst cap still applies.
		{name: "burst", deleteFirst: "b,d", burst: 1, want: []string{"delete b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []childset.Option
			if tc.burst > 0 {
				opts = append(opts, childset.WithBurstReplicas(tc.burst))
			}
			e := newScaleInEnv(t, opts...)
			other := newOwner("other", 1)
			e.addOwner(other)
			e.seedReady(other, map[string]string{"app": "other"}, "other-0")

			owner := newOwner("web", 4)
			lbl := map[string]string{"app": "web"}
			e.seedReady(owner, lbl, "a", "b", "c", "d")
			e.seed(newChild("not-ready", owner, lbl))
			if tc.name == "among the named, the deletion order" {
				// Scale down by one, with three named.
				*owner.Spec.Replicas = 5
				cheap := newChild("cheap", owner, lbl)
				cheap.Annotations = map[string]string{"ready": "true", childset.DeletionCostAnnotation: "-5"}
				e.seed(cheap)
			} else {
				*owner.Spec.Replicas = 3
			}
			owner.Annotations = map[string]string{deleteFirstAnnotation: tc.deleteFirst}
			e.addOwner(owner)

			e.reconcile("web")
			if got := sortedWrites(e.writes()); !slices.Equal(got, tc.want) {
				t.Fatalf("scale-down wrote %v, want %v", got, tc.want)
			}
			// Never more than asked: a lagging cache deletes nothing more.
			e.reconcile("web")
			if got := countPrefix(e.writes(), "delete "); got != len(tc.want) {
				t.Fatalf("lagging cache: %d deletes, want %d", got, len(tc.want))
			}
		})
	}
}

// In indexed mode the names choose among the children holding no wanted
// name; a named child holding a wanted index stays.
func TestIndexedScaleDownDeletesNamedExtrasFirst(t *testing.T) {
	e := newScaleInEnv(t, childset.WithIndexedNames(nil), childset.WithBurstReplicas(1))
	owner := newOwner("web", 2)
	owner.Annotations = map[string]string{deleteFirstAnnotation: "web-1,web-2"}
	e.addOwner(owner)
	for i := range 4 {
		e.seed(newChild(names("web", i)[0], owner, map[string]string{"app": "web", childset.IndexLabel: names("", i)[0][1:]}))
	}
	// Without names the highest index, web-3, would go first.
	e.reconcile("web")
	if got, want := e.writes(), []string{"delete web-2"}; !slices.Equal(got, want) {
		t.Fatalf("first pass wrote %v, want %v", got, want)
	}
	e.catchUp()
	e.reconcile("web")
	e.catchUp()
	e.reconcile("web")
	if want := names("web", 0, 1); !slices.Equal(e.apiNames(), want) {
		t.Fatalf("API holds %v, want %v (a named child of a wanted index stays)", e.apiNames(), want)
	}
	if got := countPrefix(e.writes(), "create "); got != 0 {
		t.Fatalf("%d creates, want none", got)
	}
}

// namedRolloutSpec is rolloutSpec with ScaleInSpec.
type namedRolloutSpec struct {
	*rolloutSpec
	names []string
}

func (s namedRolloutSpec) ChildrenToDeleteFirst(*appsv1.ReplicaSet) []string { return s.names }

// A scale-down during a rollout of interchangeable children deletes the
// named children first among children alike.
func TestRolloutScaleDownDeletesNamedFirst(t *testing.T) {
	e := newRollEnv(t, 4, childset.RollingUpdate{MaxSurge: num(1), MaxUnavailable: num(0)})
	e.settle()
	// Name the two children the deletion order keeps longest.
	children := e.apiChildren()
	slices.SortStableFunc(children, childset.DefaultOrder(cmKind{}.Ready))
	named := []string{children[2].Name, children[3].Name}
	e.r = childset.NewReconciler[*appsv1.ReplicaSet](namedRolloutSpec{e.spec, named},
		readySinceKind{cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}}, configMapControl(e.client, nil),
		childset.WithEventRecorder(e.recorder), childset.WithClock(e.clock), childset.WithRevisions(e.history))
	e.client.ClearActions()
	scaled := e.owner.DeepCopy()
	*scaled.Spec.Replicas = 2
	if err := e.owners.Update(scaled); err != nil {
		t.Fatal(err)
	}
	e.reconcile("web")
	want := []string{"delete " + named[0], "delete " + named[1]}
	slices.Sort(want)
	if got := sortedWrites(e.writes()); !slices.Equal(got, want) {
		t.Fatalf("scale-down wrote %v, want %v", got, want)
	}
}
