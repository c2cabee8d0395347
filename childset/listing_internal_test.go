package childset

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// readCounter counts the ByIndex reads of an indexer, to tell a kept
// listing from a read of the store.
type readCounter struct {
	cache.Indexer
	reads int
}

func (c *readCounter) ByIndex(name, value string) ([]any, error) {
	c.reads++
	return c.Indexer.ByIndex(name, value)
}

func listingChild(name string, owner *metav1.OwnerReference) *v1.ConfigMap {
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": "web"}}}
	if owner != nil {
		cm.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return cm
}

var (
	webRef = &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "web", Controller: new(true)}
	apiRef = &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "api", UID: "api", Controller: new(true)}
)

// IndexerLister lists an unchanged key from its last listing, in the same
// order, without reading the store; a change of the key is read.
func TestIndexerListerKeepsAnUnchangedListing(t *testing.T) {
	store := &readCounter{Indexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{ControllerIndex: claim.IndexByController})}
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		if err := store.Add(listingChild(name, webRef)); err != nil {
			t.Fatal(err)
		}
	}
	l := IndexerLister[*v1.ConfigMap](store)
	first, err := l.ListControlledBy("ns", webRef)
	if err != nil || len(first) != 5 {
		t.Fatalf("listed %d children, error %v; want 5", len(first), err)
	}
	reads := store.reads
	again, err := l.ListControlledBy("ns", webRef)
	if err != nil || !slices.Equal(again, first) {
		t.Fatalf("second listing %v (error %v), want the first again, in its order", again, err)
	}
	if store.reads != reads {
		t.Fatalf("an unchanged key was read from the store")
	}
	scratch := l.(indexerLister[*v1.ConfigMap]).listings.byKey[claim.ControllerIndexKey("ns", webRef)].scratch
	if cap(scratch) < 5 || slices.ContainsFunc(scratch[:cap(scratch)], func(obj any) bool { return obj != nil }) {
		t.Fatalf("the scratch space of a read (capacity %d) was not kept, or holds objects", cap(scratch))
	}
	changed := listingChild("c", webRef)
	changed.Annotations = map[string]string{"changed": "yes"}
	if err := store.Update(changed); err != nil {
		t.Fatal(err)
	}
	after, err := l.ListControlledBy("ns", webRef)
	if err != nil || store.reads != reads+1 || !slices.Contains(after, changed) || len(after) != 5 {
		t.Fatalf("after an update: %d reads (want %d), listing holds the new object: %v, error %v",
			store.reads, reads+1, slices.Contains(after, changed), err)
	}
}

// IndexerLister still refuses an object of another type, kept or not.
func TestIndexerListerRefusesForeignObjects(t *testing.T) {
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{ControllerIndex: claim.IndexByController})
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", OwnerReferences: []metav1.OwnerReference{*webRef}}}
	if err := store.Add(pod); err != nil {
		t.Fatal(err)
	}
	l := IndexerLister[*v1.ConfigMap](store)
	for range 2 {
		if _, err := l.ListControlledBy("ns", webRef); err == nil || !strings.Contains(err.Error(), "holds a *v1.Pod") {
			t.Fatalf("listing a Pod as ConfigMaps: error %v", err)
		}
	}
}

// A listing whose key changed is dropped by later reads of other keys, so
// that the children of a deleted owner are not kept.
func TestIndexerListerDropsListingsNoLongerCurrent(t *testing.T) {
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{ControllerIndex: claim.IndexByController})
	gone := listingChild("gone", apiRef)
	for _, cm := range []*v1.ConfigMap{gone, listingChild("a", webRef)} {
		if err := store.Add(cm); err != nil {
			t.Fatal(err)
		}
	}
	l := IndexerLister[*v1.ConfigMap](store).(indexerLister[*v1.ConfigMap])
	for _, ref := range []*metav1.OwnerReference{apiRef, webRef} {
		if _, err := l.ListControlledBy("ns", ref); err != nil {
			t.Fatal(err)
		}
	}
	apiKey := claim.ControllerIndexKey("ns", apiRef)
	held := func() bool {
		l.listings.mu.Lock()
		defer l.listings.mu.Unlock()
		_, ok := l.listings.byKey[apiKey]
		return ok
	}
	for range 4 {
		if _, err := l.ListControlledBy("ns", webRef); err != nil {
			t.Fatal(err)
		}
	}
	if !held() {
		t.Fatalf("a current listing was dropped")
	}
	if err := store.Delete(gone); err != nil {
		t.Fatal(err)
	}
	// Each read checks one other listing in turn: whatever was left of
	// the last turn, then a turn over both keys.
	for range 3 {
		if _, err := l.ListControlledBy("ns", webRef); err != nil {
			t.Fatal(err)
		}
	}
	if held() {
		t.Fatalf("the listing of a key whose children went away is still kept")
	}
}

// claimSpec owns ConfigMaps labelled app=web for the ReplicaSet "web".
type claimSpec struct{ webSpec }

func (claimSpec) Get(string, string) (*appsv1.ReplicaSet, error) {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "web"}}, nil
}
func (claimSpec) Replicas(*appsv1.ReplicaSet) int32 { return 3 }
func (claimSpec) NewChild(*appsv1.ReplicaSet) (*v1.ConfigMap, error) {
	return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}, nil
}

var _ Spec[*appsv1.ReplicaSet, *v1.ConfigMap] = claimSpec{}

// Once every child of an unchanged listing was kept, the claim keeps the
// listing and answers the next sync from it whole; a listing that differs
// is claimed child by child again.
func TestClaimReusesAnUnchangedListing(t *testing.T) {
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{ControllerIndex: claim.IndexByController})
	terminating := listingChild("c", webRef)
	terminating.DeletionTimestamp = &metav1.Time{}
	for _, cm := range []*v1.ConfigMap{listingChild("a", webRef), listingChild("b", webRef), terminating,
		listingChild("d", webRef)} {
		if err := store.Add(cm); err != nil {
			t.Fatal(err)
		}
	}
	fake := &objectcontrol.Fake[*v1.ConfigMap]{}
	r := NewReconciler(claimSpec{}, readyKind{IndexerLister[*v1.ConfigMap](store)}, fake)
	kept := func() []*v1.ConfigMap {
		m, ok := r.claimMemos.Peek("ns/web")
		if !ok {
			return nil
		}
		return m.listing
	}
	if _, err := r.Reconcile(context.Background(), "ns/web"); err != nil {
		t.Fatal(err)
	}
	owner, _ := claimSpec{}.Get("ns", "web")
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	manager := claim.NewObjectControllerRefManager[*v1.ConfigMap](r.patcher(expectations.OwnerKeyFor(owner)), owner, sel,
		claimSpec{}.GroupVersionKind(), r.canAdopt(owner))
	listing, err := r.kind.ListControlledBy("ns", webRef)
	if err != nil {
		t.Fatal(err)
	}
	// The first sync claimed each child; this claim finds each in the memo
	// and keeps the listing.
	recorded, err := r.claimChildren(context.Background(), "ns/web", owner, sel, manager, listing)
	if err != nil || len(kept()) != 4 {
		t.Fatalf("after two claims the memo keeps a listing of %d children (error %v), want 4", len(kept()), err)
	}
	// The caller owns what it is given, kept or reused.
	recorded.active[0], listing[0] = nil, nil
	listing, err = r.kind.ListControlledBy("ns", webRef)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.claimChildren(context.Background(), "ns/web", owner, sel, manager, listing)
	if err != nil || !slices.Equal(got.children, listing) || len(got.terminating) != 1 || len(got.active) != 3 ||
		slices.Contains(got.active, terminating) || slices.Contains(got.active, nil) {
		t.Fatalf("claim of the kept listing: %d children, %d active, %d terminating, error %v; want 4, 3, 1",
			len(got.children), len(got.active), len(got.terminating), err)
	}
	got.active[0] = nil
	if again, _ := r.claimChildren(context.Background(), "ns/web", owner, sel, manager, listing); again.active[0] == nil {
		t.Fatalf("a reused claim handed out the memo's own slice")
	}
	// A new object in place of one kept is claimed afresh.
	relabelled := listingChild("b", webRef)
	relabelled.Labels = map[string]string{"app": "other"}
	listing[1] = relabelled
	released, err := r.claimChildren(context.Background(), "ns/web", owner, sel, manager, listing)
	if _, _, patches := fake.Counts(); err != nil || patches != 1 || slices.Contains(released.children, relabelled) {
		t.Fatalf("a child the selector no longer matches: %d patches, error %v, still claimed: %v; want it released",
			patches, err, slices.Contains(released.children, relabelled))
	}
	if kept() != nil {
		t.Fatalf("a listing claimed with a release is still kept whole")
	}
}
