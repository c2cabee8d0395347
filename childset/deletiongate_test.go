package childset_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ctrlkit/ctrlkit/childset"
)

// drainLabel is the test gate's label.
const drainLabel = "test.ctrlkit.io/drain"

// gateSpec is scaleInSpec with a deletion gate of timeout; releasedBy, when
// not empty, is the annotation a child is released by (DeletionReleaser).
type gateSpec struct {
	scaleInSpec
	timeout    time.Duration
	releasedBy string
}

func (s gateSpec) DeletionGate(*appsv1.ReplicaSet) childset.DeletionGate {
	return childset.DeletionGate{Label: drainLabel, Timeout: s.timeout}
}

func (s gateSpec) DeletionReleased(_ *appsv1.ReplicaSet, cm *v1.ConfigMap) bool {
	return s.releasedBy != "" && cm.Annotations[s.releasedBy] == "true"
}

var (
	_ childset.DeletionGateSpec[*appsv1.ReplicaSet]                = gateSpec{}
	_ childset.DeletionReleaser[*appsv1.ReplicaSet, *v1.ConfigMap] = gateSpec{}
)

func newGateEnv(t *testing.T, spec gateSpec) *env {
	t.Helper()
	e := newEnv(t)
	spec.scaleInSpec = scaleInSpec{rsSpec{e.owners}}
	e.r = childset.NewReconciler[*appsv1.ReplicaSet, *v1.ConfigMap](spec, cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)},
		configMapControl(e.client, nil), childset.WithEventRecorder(e.recorder), childset.WithClock(e.clock))
	return e
}

// marked lists the API's children whose gate label is pending.
func (e *env) marked() []string {
	var out []string
	for _, cm := range e.apiChildren() {
		if cm.Labels[drainLabel] == childset.DeletionGatePending {
			out = append(out, cm.Name)
		}
	}
	slices.Sort(out)
	return out
}

// release clears the gate label of the named child in the API, as a drain
// controller would, and delivers it to the cache.
func (e *env) release(name string) {
	e.t.Helper()
	cm, err := e.client.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	delete(cm.Labels, drainLabel)
	if _, err := e.client.CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.catchUp()
}

// A scale-in with a gate marks its victims and deletes none until each is
// released; the set never goes below its wanted count nor above its
// current one meanwhile, and marks no more children than it deletes.
func TestDeletionGateHoldsAScaleInUntilReleased(t *testing.T) {
	e := newGateEnv(t, gateSpec{timeout: time.Hour})
	owner := newOwner("web", 2)
	e.addOwner(owner)
	e.seedReady(owner, map[string]string{"app": "web"}, "a", "b", "c", "d")

	res := e.reconcile("web")
	if got := countPrefix(e.writes(), "delete "); got != 0 {
		t.Fatalf("deleted %d children before any release", got)
	}
	marked := e.marked()
	if len(marked) != 2 {
		t.Fatalf("marked %v, want two victims", marked)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > time.Hour {
		t.Fatalf("RequeueAfter %v, want at most the gate's timeout", res.RequeueAfter)
	}
	// An unmarked child turning unready would come first in the deletion
	// order; the marked ones stay chosen.
	for _, cm := range e.apiChildren() {
		if !slices.Contains(marked, cm.Name) {
			cm.Annotations["ready"] = "false"
			if _, err := e.client.CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	e.catchUp()
	for range 3 {
		e.reconcile("web")
		e.catchUp()
		if got := e.marked(); !slices.Equal(got, marked) {
			t.Fatalf("held syncs marked %v, want the same %v", got, marked)
		}
		if n := len(e.apiChildren()); n != 4 {
			t.Fatalf("%d children while held, want 4", n)
		}
	}

	e.release(marked[0])
	e.reconcile("web")
	e.catchUp()
	if got := e.apiNames(); slices.Contains(got, marked[0]) || !slices.Contains(got, marked[1]) || len(got) != 3 {
		t.Fatalf("after releasing %s: children %v", marked[0], got)
	}
	e.release(marked[1])
	e.reconcile("web")
	e.catchUp()
	if got := e.apiNames(); len(got) != 2 || slices.Contains(got, marked[1]) {
		t.Fatalf("after both releases: children %v, want the two unmarked", got)
	}
}

// A gate not released within its timeout lets the deletion go, with a
// Warning event, exactly when the timeout passes.
func TestDeletionGateTimesOut(t *testing.T) {
	e := newGateEnv(t, gateSpec{timeout: time.Minute})
	owner := newOwner("web", 1)
	e.addOwner(owner)
	e.seedReady(owner, map[string]string{"app": "web"}, "a", "b")

	res := e.reconcile("web")
	e.catchUp()
	if res.RequeueAfter != time.Minute {
		t.Fatalf("RequeueAfter %v, want the timeout", res.RequeueAfter)
	}
	e.clock.Step(59 * time.Second)
	res = e.reconcile("web")
	if got := countPrefix(e.writes(), "delete "); got != 0 {
		t.Fatal("deleted before the timeout")
	}
	if res.RequeueAfter != time.Second {
		t.Fatalf("RequeueAfter %v, want the second left", res.RequeueAfter)
	}
	e.clock.Step(time.Second)
	e.reconcile("web")
	if got := countPrefix(e.writes(), "delete "); got != 1 {
		t.Fatalf("%d deletions at the timeout, want 1", got)
	}
	if !slices.ContainsFunc(e.events(), func(ev string) bool {
		return strings.HasPrefix(ev, "Warning "+childset.ReasonDeletionGateTimeout+" ")
	}) {
		t.Fatal("no Warning event for the timeout")
	}
}

// The Spec may release a marked child itself (DeletionReleaser).
func TestDeletionGateReleasedByTheSpec(t *testing.T) {
	e := newGateEnv(t, gateSpec{timeout: time.Hour, releasedBy: "drained"})
	owner := newOwner("web", 1)
	e.addOwner(owner)
	e.seedReady(owner, map[string]string{"app": "web"}, "a", "b")
	e.reconcile("web")
	e.catchUp()
	victim := e.marked()[0]
	cm, err := e.client.CoreV1().ConfigMaps(ns).Get(context.Background(), victim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Annotations["drained"] = "true"
	if _, err := e.client.CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.catchUp()
	e.reconcile("web")
	if got := e.writes(); !slices.Contains(got, "delete "+victim) {
		t.Fatalf("writes %v, want %s deleted once the Spec released it", got, victim)
	}
}

// A request time that does not parse, or lies in the future (another
// replica's clock), counts from now: the gate holds no longer than its
// timeout from this look.
func TestDeletionGateBadRequestTime(t *testing.T) {
	for _, requested := range []string{"not a time", "2099-01-01T00:00:00Z"} {
		e := newGateEnv(t, gateSpec{timeout: time.Minute})
		owner := newOwner("web", 1)
		e.addOwner(owner)
		e.seedReady(owner, map[string]string{"app": "web"}, "a")
		held := newChild("b", owner, map[string]string{"app": "web", drainLabel: childset.DeletionGatePending})
		held.Annotations = map[string]string{"ready": "true", childset.DeletionRequestedAnnotation: requested}
		e.seed(held)
		res := e.reconcile("web")
		if got := countPrefix(e.writes(), "delete "); got != 0 || res.RequeueAfter != time.Minute {
			t.Fatalf("%q: %d deletions, RequeueAfter %v; want none, and a look after the timeout", requested, got, res.RequeueAfter)
		}
		if got := e.writes(); !slices.Equal(got, []string{"patch b"}) {
			t.Fatalf("%q: writes %v, want b marked again", requested, got)
		}
		e.catchUp()
		e.clock.Step(time.Minute)
		e.reconcile("web")
		if got := e.writes(); !slices.Contains(got, "delete b") {
			t.Fatalf("%q: writes %v, want b deleted after the timeout", requested, got)
		}
	}
}
