package claim_test

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/claim"
)

// A ReplicaSet claims its pods: it keeps the one it owns, adopts the
// matching orphan, and ignores the pod with other labels.
func ExamplePodControllerRefManager_ClaimPods() {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "rs-uid"}}
	kind := appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	pod := func(name, app string, owned bool) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"),
			Labels: map[string]string{"app": app}}}
		if owned {
			p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, kind)}
		}
		return p
	}
	patches := &recordedPatches{}
	m := claim.NewPodControllerRefManager(patches, rs, labels.SelectorFromSet(labels.Set{"app": "web"}), kind,
		claim.RecheckDeletionTimestamp(func(context.Context) (metav1.Object, error) { return rs, nil }))

	claimed, err := m.ClaimPods(context.Background(), []*v1.Pod{pod("a", "web", true), pod("b", "web", false), pod("c", "db", false)})
	for _, p := range claimed {
		fmt.Println("claimed", p.Name)
	}
	fmt.Println("error:", err)
	fmt.Println("adoption patch:", patches.bodies[0])
	// Output:
	// claimed a
	// claimed b
	// error: <nil>
	// adoption patch: {"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web","uid":"rs-uid","controller":true,"blockOwnerDeletion":true}],"uid":"b-uid"}}
}

// The generic manager claims any kind; here a Deployment-like owner claims
// ReplicaSets through a Patcher (NewReplicaSetPatcher or NewDynamicPatcher in
// real code).
func ExampleNewObjectControllerRefManager() {
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "dep-uid"}}
	patcher := claim.PatcherFunc(func(_ context.Context, namespace, name string, data []byte) error {
		fmt.Printf("patch %s/%s: %s\n", namespace, name, data)
		return nil
	})
	m := claim.NewObjectControllerRefManager[*appsv1.ReplicaSet](patcher, deploy,
		labels.SelectorFromSet(labels.Set{"app": "web"}), appsv1.SchemeGroupVersion.WithKind("Deployment"), nil)
	orphan := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default", UID: "rs-1",
		Labels: map[string]string{"app": "web"}}}
	claimed, err := m.Claim(context.Background(), []*appsv1.ReplicaSet{orphan})
	fmt.Println(len(claimed), err)
	// Output:
	// patch default/web-1: {"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"dep-uid","controller":true,"blockOwnerDeletion":true}],"uid":"rs-1"}}
	// 1 <nil>
}

func ExampleGenerateDeleteOwnerRefStrategicMergeBytes() {
	patch, _ := claim.GenerateDeleteOwnerRefStrategicMergeBytes("pod-uid", []types.UID{"rs-uid"}, "example.com/finalizer")
	fmt.Println(string(patch))
	// Output:
	// {"metadata":{"uid":"pod-uid","ownerReferences":[{"$patch":"delete","uid":"rs-uid"}],"$deleteFromPrimitiveList/finalizers":["example.com/finalizer"]}}
}

// recordedPatches is a claim.PodPatcher that keeps the patch bodies; in a
// controller, a podcontrol.PodControl is the patcher.
type recordedPatches struct{ bodies []string }

func (r *recordedPatches) PatchPod(_ context.Context, _, _ string, data []byte) error {
	r.bodies = append(r.bodies, string(data))
	return nil
}

// An orphan's event syncs the owners that may adopt it.
func ExampleAdopters() {
	orphan := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"app": "web"}}}
	owners := []*appsv1.ReplicaSet{
		{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "everything"}, Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{}}},
	}
	for _, rs := range claim.Adopters(orphan, owners, func(rs *appsv1.ReplicaSet) (labels.Selector, error) {
		return metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	}) {
		fmt.Println(rs.Name)
	}
	// Output: web
}

// An owner's sync lists its pods by controller reference. Kept in an
// IndexListing, the listing is read from the store again only once a pod
// filed under the owner changed.
func ExampleIndexListing() {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{"by-controller": claim.IndexByController})
	rs := &metav1.OwnerReference{Kind: "ReplicaSet", Name: "web", UID: "uid-web", Controller: new(true)}
	pod := func(name, image string) *v1.Pod {
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, OwnerReferences: []metav1.OwnerReference{*rs}},
			Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: image}}},
		}
	}
	_ = indexer.Add(pod("web-1", "v1"))
	_ = indexer.Add(pod("web-2", "v1"))

	var listing claim.IndexListing[*v1.Pod] // one per owner, kept between its syncs
	key := claim.ControllerIndexKey("default", rs)
	show := func() {
		pods, err := listing.AppendTo(nil, indexer, "by-controller", key)
		if err != nil {
			fmt.Println(err)
			return
		}
		var shown []string
		for _, p := range pods {
			shown = append(shown, p.Name+":"+p.Spec.Containers[0].Image)
		}
		slices.Sort(shown)
		fmt.Println(strings.Join(shown, " "))
	}
	show()
	show() // from the listing: nothing changed
	_ = indexer.Update(pod("web-2", "v2"))
	show() // read again
	// Output:
	// web-1:v1 web-2:v1
	// web-1:v1 web-2:v1
	// web-1:v1 web-2:v2
}
