package history_test

import (
	"context"
	"fmt"
	"hash/fnv"

	"github.com/ctrlkit/ctrlkit/history"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

// A StatefulSet-like controller records its template as a revision, and a
// second, different template gets the next revision number.
func Example() {
	ctx := context.Background()
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "db-uid"}}
	kind := appsv1.SchemeGroupVersion.WithKind("StatefulSet")

	client := fake.NewClientset()
	revisions := informers.NewSharedInformerFactory(client, 0).Apps().V1().ControllerRevisions()
	h := history.NewFakeHistory(revisions) // history.NewHistory(client, revisions.Lister()) in production

	var collisions int32
	for i, image := range []string{"postgres:16", "postgres:17"} {
		data := runtime.RawExtension{Raw: []byte(`{"image":"` + image + `"}`)}
		rev, err := history.NewControllerRevision(set, kind, map[string]string{"app": "db"}, data, int64(i+1), &collisions)
		if err != nil {
			panic(err)
		}
		if _, err := h.CreateControllerRevision(ctx, set, rev, &collisions); err != nil {
			panic(err)
		}
	}
	list, err := h.ListControllerRevisions(ctx, set, kind, labels.SelectorFromSet(labels.Set{"app": "db"}))
	if err != nil {
		panic(err)
	}
	history.SortControllerRevisions(list)
	for _, r := range list {
		fmt.Println(r.Revision, string(r.Data.Raw))
	}
	// Output:
	// 1 {"image":"postgres:16"}
	// 2 {"image":"postgres:17"}
}

// FindReplicaSet recognises a ReplicaSet whose hash label was written by
// another Kubernetes minor's libraries, by comparing templates.
func ExampleFindReplicaSet() {
	template := &v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "web", Image: "nginx:1.25"}}},
	}
	// As the API server stores it: defaults filled in, an older hash.
	stored := template.DeepCopy()
	stored.Labels["pod-template-hash"] = "5d8f6b7c9d"
	stored.Spec.RestartPolicy = v1.RestartPolicyAlways
	stored.Spec.Containers[0].ImagePullPolicy = v1.PullIfNotPresent
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-5d8f6b7c9d", Labels: map[string]string{"pod-template-hash": "5d8f6b7c9d"}},
		Spec:       appsv1.ReplicaSetSpec{Template: *stored},
	}

	got, how := history.FindReplicaSet([]*appsv1.ReplicaSet{rs}, template, "pod-template-hash", nil)
	fmt.Println(got.Name, how)
	// Output: web-5d8f6b7c9d MatchedBySemantics
}

// DeepHashObject hashes an object by value: two equal objects hash alike
// however their pointers and maps were built, and the hasher is reset
// first, so one hasher serves many objects.
func ExampleDeepHashObject() {
	type shard struct {
		Name     string
		Replicas *int32
		Labels   map[string]string
	}
	three, alsoThree := int32(3), int32(3)
	h := fnv.New32a()
	history.DeepHashObject(h, shard{Name: "a", Replicas: &three, Labels: map[string]string{"x": "1", "y": "2"}})
	first := h.Sum32()
	history.DeepHashObject(h, shard{Name: "a", Replicas: &alsoThree, Labels: map[string]string{"y": "2", "x": "1"}})
	fmt.Println(first == h.Sum32())
	// Output: true
}
