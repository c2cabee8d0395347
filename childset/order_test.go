package childset

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// readyKind is a Kind whose children are ready when annotated so; it lists
// nothing.
type readyKind struct{ Lister[*v1.ConfigMap] }

func (readyKind) Ready(cm *v1.ConfigMap) bool { return cm.Annotations["ready"] == "true" }

// The core sorts packed deletion keys instead of children; on inputs full
// of ties in every field (readiness, cost, malformed costs, creation times
// within a second and years apart, UIDs) it must answer exactly what a
// stable sort by DefaultOrder does, the named children first.
func TestInDeletionOrderIsStableSortByDefaultOrder(t *testing.T) {
	r := &Reconciler[*v1.ConfigMap, *v1.ConfigMap]{kind: readyKind{}}
	costs := []string{"", "", "0", "-3", "7", "abc", "2147483648", "-2147483648", "2147483647"}
	// Times a few seconds and nanoseconds apart, and some more than the
	// packed creation field holds (zero, 1901, 2026, 2099).
	var creationTimes []metav1.Time
	for s := range 3 {
		for ns := range 2 {
			creationTimes = append(creationTimes, metav1.Unix(int64(s), int64(ns)*500))
		}
	}
	creationTimes = append(creationTimes, metav1.Time{}, metav1.Unix(-2_177_452_800, 0), metav1.Unix(-2_177_452_800, 7),
		metav1.Unix(1_790_000_000, 0), metav1.Unix(4_070_908_800, 0), metav1.Unix(4_070_908_800, 1))
	// Short UIDs, and long ones alike in their first 8 bytes or more.
	uids := []string{"u0", "u1", "u2", "u3", "0123456789a", "0123456789b", "01234567", "01234567\x00"}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		n := rng.IntN(60)
		children := make([]*v1.ConfigMap, n)
		for i := range children {
			cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Name:              "c" + strconv.Itoa(i),
				UID:               types.UID(uids[rng.IntN(len(uids))]),
				CreationTimestamp: creationTimes[rng.IntN(len(creationTimes))],
				Annotations:       map[string]string{},
			}}
			if rng.IntN(2) == 0 {
				cm.Annotations["ready"] = "true"
			}
			if c := costs[rng.IntN(len(costs))]; c != "" {
				cm.Annotations[DeletionCostAnnotation] = c
			}
			children[i] = cm
		}
		want := slices.Clone(children)
		slices.SortStableFunc(want, referenceOrder)
		ready := make([]bool, n)
		for i, c := range children {
			ready[i] = readyKind{}.Ready(c)
		}
		for _, k := range []int{0, 1, n / 3, n - 1, n, n + 5} {
			if got := r.inDeletionOrder(children, ready, nil, k); !slices.Equal(got, want[:max(0, min(k, n))]) {
				t.Fatalf("round %d, first %d: keyed order %v, stable sort %v", round, k, names(got), names(want))
			}
		}
		named := map[string]bool{}
		for _, c := range children {
			if rng.IntN(5) == 0 {
				named[c.Name] = true
			}
		}
		wantNamed := slices.Clone(children)
		slices.SortStableFunc(wantNamed, func(a, b *v1.ConfigMap) int {
			if named[a.Name] != named[b.Name] {
				if named[a.Name] {
					return -1
				}
				return 1
			}
			return referenceOrder(a, b)
		})
		for _, k := range []int{0, 1, n / 2, n} {
			if got := r.inDeletionOrder(children, ready, named, k); !slices.Equal(got, wantNamed[:min(k, n)]) {
				t.Fatalf("round %d, first %d with %d named: keyed order %v, stable sort %v", round, k, len(named), names(got), names(wantNamed))
			}
		}
		viaOrder := slices.Clone(children)
		slices.SortStableFunc(viaOrder, DefaultOrder(readyKind{}.Ready))
		if !slices.Equal(viaOrder, want) {
			t.Fatalf("round %d: DefaultOrder %v, stable sort %v", round, names(viaOrder), names(want))
		}
	}
}

// referenceOrder is DefaultOrder as its documentation says it, written
// out child against child.
func referenceOrder(a, b *v1.ConfigMap) int {
	ra, rb := a.Annotations["ready"] == "true", b.Annotations["ready"] == "true"
	switch {
	case ra != rb && !ra:
		return -1
	case ra != rb:
		return 1
	}
	costOf := func(cm *v1.ConfigMap) int64 {
		v, err := strconv.ParseInt(cm.Annotations[DeletionCostAnnotation], 10, 32)
		if err != nil {
			return 0
		}
		return v
	}
	if ca, cb := costOf(a), costOf(b); ca != cb {
		if ca < cb {
			return -1
		}
		return 1
	}
	if ta, tb := a.CreationTimestamp.Time, b.CreationTimestamp.Time; !ta.Equal(tb) {
		if ta.After(tb) {
			return -1
		}
		return 1
	}
	switch {
	case a.UID < b.UID:
		return -1
	case a.UID > b.UID:
		return 1
	}
	return 0
}

// A WithDeletionOrder order is used as given, stably.
func TestInDeletionOrderUsesTheCallersOrder(t *testing.T) {
	byName := func(a, b *v1.ConfigMap) int { return len(a.Name) - len(b.Name) }
	r := &Reconciler[*v1.ConfigMap, *v1.ConfigMap]{kind: readyKind{}, order: byName}
	var children []*v1.ConfigMap
	for _, n := range []string{"ccc", "a", "bb", "d", "ee"} {
		children = append(children, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	if got, want := names(r.inDeletionOrder(children, make([]bool, len(children)), nil, 4)), []string{"a", "d", "bb", "ee"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if got := names(children); !slices.Equal(got, []string{"ccc", "a", "bb", "d", "ee"}) {
		t.Fatalf("the input was reordered: %v", got)
	}
	// Named children (ScaleInSpec) go first, in the caller's order too.
	named := map[string]bool{"ee": true, "ccc": true}
	if got, want := names(r.inDeletionOrder(children, make([]bool, len(children)), named, 3)), []string{"ee", "ccc", "a"}; !slices.Equal(got, want) {
		t.Fatalf("named first: order %v, want %v", got, want)
	}
}

func names(cms []*v1.ConfigMap) []string {
	out := make([]string, len(cms))
	for i, cm := range cms {
		out[i] = cm.Name
	}
	return out
}
