package childset_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), want) {
			t.Errorf("panic %v, want one containing %q", r, want)
		}
	}()
	f()
}

func TestOptionsAndConstructorPanics(t *testing.T) {
	mustPanic(t, "childset: WithBurstReplicas", func() { childset.WithBurstReplicas(0) })
	mustPanic(t, "childset: WithWorkers", func() { childset.WithWorkers(0) })
	mustPanic(t, "childset: WithNameConflictRetry", func() { childset.WithNameConflictRetry(0) })
	mustPanic(t, "childset: WithExpectationsTTL", func() { childset.WithExpectationsTTL(-time.Second) })
	mustPanic(t, "childset: WithWriteTimeout", func() { childset.WithWriteTimeout(0) })
	mustPanic(t, "childset: WithStaleCachePoll", func() { childset.WithStaleCachePoll(0) })
	mustPanic(t, "childset: WithUnreachableBackoffCap", func() { childset.WithUnreachableBackoffCap(-time.Second) })
	mustPanic(t, "childset: WithDrainTimeout", func() { childset.WithDrainTimeout(-time.Second) })
	mustPanic(t, "childset: WithQueueName", func() { childset.WithQueueName("") })
	mustPanic(t, "childset: DefaultOrder", func() { childset.DefaultOrder[*v1.ConfigMap](nil) })
	mustPanic(t, "childset: IndexerLister", func() { childset.IndexerLister[*v1.ConfigMap](nil) })

	e := newEnv(t)
	spec, kind := rsSpec{e.owners}, cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}
	w := &objectcontrol.Fake[*v1.ConfigMap]{}
	mustPanic(t, "nil spec", func() { childset.NewReconciler[*appsv1.ReplicaSet, *v1.ConfigMap](nil, kind, w) })
	mustPanic(t, "nil kind", func() { childset.NewReconciler[*appsv1.ReplicaSet, *v1.ConfigMap](spec, nil, w) })
	mustPanic(t, "nil writer", func() { childset.NewReconciler[*appsv1.ReplicaSet, *v1.ConfigMap](spec, kind, nil) })
	mustPanic(t, "WithDeletionOrder", func() {
		childset.NewReconciler(spec, kind, w, childset.WithDeletionOrder(childset.Order[*v1.Secret](func(a, b *v1.Secret) int { return 0 })))
	})
	// The core alone has no queue or workers: an option of New's driver
	// would be ignored there, so it is refused.
	mustPanic(t, "WithQueueName, WithUnreachableBackoffCap configure New's driver", func() {
		childset.NewReconciler(spec, kind, w, childset.WithQueueName("q"), childset.WithUnreachableBackoffCap(time.Second))
	})
	// The guard records the status under the owners' store and the
	// children under the other; with two others, which one the children
	// are would be a guess.
	mustPanic(t, "WithReadYourWrites: the guard has stores for", func() {
		three := consistency.NewGuard(
			consistency.WithStore(schema.GroupResource{Resource: "configmaps"}, &storeAt{}),
			consistency.WithStore(schema.GroupResource{Resource: "secrets"}, &storeAt{}),
			consistency.WithStore(schema.GroupResource{Group: "apps", Resource: "replicasets"}, &storeAt{}))
		childset.NewReconciler(spec, kind, w, childset.WithReadYourWrites(three))
	})
	childset.NewReconciler(spec, kind, w, childset.WithReadYourWrites(consistency.NewGuard(
		consistency.WithStore(schema.GroupResource{Resource: "configmaps"}, &storeAt{}),
		consistency.WithStore(schema.GroupResource{Group: "apps", Resource: "replicasets"}, &storeAt{}))))
	childset.NewReconciler(spec, kind, w, childset.WithReadYourWrites(nil))
	// A nil Option, a nil order and a nil clock keep the defaults.
	r := childset.NewReconciler(spec, kind, w, nil, childset.WithDeletionOrder[*v1.ConfigMap](nil), childset.WithClock(nil))
	if r.Workers() != childset.DefaultWorkers || r.StaleCachePoll() != childset.DefaultStaleCachePoll {
		t.Errorf("workers %d, stale-cache poll %v: want the defaults", r.Workers(), r.StaleCachePoll())
	}
	r = childset.NewReconciler(spec, kind, w, childset.WithWorkers(2), childset.WithStaleCachePoll(time.Minute))
	if r.Workers() != 2 || r.StaleCachePoll() != time.Minute {
		t.Errorf("workers %d, stale-cache poll %v: want 2 and 1m", r.Workers(), r.StaleCachePoll())
	}
}

func TestCheckSelector(t *testing.T) {
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	for _, tc := range []struct {
		name       string
		sel        labels.Selector
		selErr     error
		tmpl       map[string]string
		wantReason string
	}{
		{"matching", sel, nil, map[string]string{"app": "web", "x": "y"}, ""},
		{"conversion error", nil, errors.New("bad"), map[string]string{"app": "web"}, childset.ReasonSelectorInvalid},
		{"nil", nil, nil, map[string]string{"app": "web"}, childset.ReasonSelectorInvalid},
		{"empty", labels.Everything(), nil, map[string]string{"app": "web"}, childset.ReasonSelectorInvalid},
		{"mismatch", sel, nil, map[string]string{"app": "db"}, childset.ReasonSelectorMismatch},
		{"no template labels", sel, nil, nil, childset.ReasonSelectorMismatch},
	} {
		err := childset.CheckSelector(tc.sel, tc.selErr, tc.tmpl)
		var specErr *childset.SpecError
		switch {
		case tc.wantReason == "" && err != nil:
			t.Errorf("%s: %v, want nil", tc.name, err)
		case tc.wantReason != "" && (!errors.As(err, &specErr) || specErr.Reason != tc.wantReason):
			t.Errorf("%s: %v, want a SpecError %s", tc.name, err, tc.wantReason)
		}
	}
}

func TestDefaultOrder(t *testing.T) {
	at := func(sec int64) metav1.Time { return metav1.Unix(sec, 0) }
	cm := func(name string, ready bool, cost string, created int64, uid string) *v1.ConfigMap {
		c := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid), CreationTimestamp: at(created),
			Annotations: map[string]string{}}}
		if ready {
			c.Annotations["ready"] = "true"
		}
		if cost != "" {
			c.Annotations[childset.DeletionCostAnnotation] = cost
		}
		return c
	}
	list := []*v1.ConfigMap{
		cm("ready-old", true, "", 10, "a"),
		cm("ready-new-b", true, "", 20, "b"),
		cm("ready-new-a", true, "", 20, "a"),
		cm("ready-costly", true, "100", 30, "a"),
		cm("ready-cheap", true, "-1", 5, "a"),
		cm("ready-bad-cost", true, "abc", 1, "a"), // malformed: cost 0
		cm("not-ready", false, "1000", 1, "a"),
	}
	slices.SortStableFunc(list, childset.DefaultOrder(cmKind{}.Ready))
	var got []string
	for _, c := range list {
		got = append(got, c.Name)
	}
	want := []string{"not-ready", "ready-cheap", "ready-new-a", "ready-new-b", "ready-old", "ready-bad-cost", "ready-costly"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// A custom naming function is used for creation and for finding the
// extra children.
func TestIndexedCustomNames(t *testing.T) {
	name := func(owner string, i int) string { return "worker-" + string(rune('a'+i)) + "." + owner }
	e := newEnv(t, childset.WithIndexedNames(name))
	e.addOwner(newOwner("web", 2))
	e.reconcile("web")
	if want := []string{"worker-a.web", "worker-b.web"}; !slices.Equal(e.apiNames(), want) {
		t.Fatalf("API holds %v, want %v", e.apiNames(), want)
	}
}

// A spec asking for billions of indexed children costs one burst, not a
// walk over every index, and a constant naming function does not loop.
func TestIndexedHugeReplicasAndRepeatingNames(t *testing.T) {
	e := newEnv(t, childset.WithIndexedNames(nil), childset.WithBurstReplicas(3))
	e.addOwner(newOwner("web", math.MaxInt32))
	start := time.Now()
	e.reconcile("web")
	if got := len(e.apiNames()); got != 3 {
		t.Fatalf("created %d, want one burst of 3", got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("one sync took %v", d)
	}

	e = newEnv(t, childset.WithIndexedNames(func(string, int) string { return "same" }))
	e.addOwner(newOwner("web", math.MaxInt32))
	e.reconcile("web")
	e.catchUp()
	e.reconcile("web")
	if want := []string{"same"}; !slices.Equal(e.apiNames(), want) {
		t.Fatalf("API holds %v, want %v", e.apiNames(), want)
	}
}

type nilChildSpec struct{ rsSpec }

func (nilChildSpec) NewChild(*appsv1.ReplicaSet) (*v1.ConfigMap, error) { return nil, nil }

func TestNilChildFromSpecIsRefused(t *testing.T) {
	e := newEnv(t)
	e.addOwner(newOwner("web", 1))
	r := childset.NewReconciler[*appsv1.ReplicaSet, *v1.ConfigMap](nilChildSpec{rsSpec{e.owners}},
		cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}, configMapControl(e.client, nil), childset.WithEventRecorder(e.recorder))
	e.r = r
	if res := e.reconcile("web"); res.RequeueAfter != 0 {
		t.Errorf("RequeueAfter %v", res.RequeueAfter)
	}
	if evs := e.events(); len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning "+childset.ReasonTemplateInvalid) {
		t.Fatalf("events %v", evs)
	}
	if w := e.writes(); len(w) != 0 {
		t.Fatalf("writes %v", w)
	}
}
