package crhistory_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/crhistory"
	"github.com/ctrlkit/ctrlkit/history"
)

// Recording two templates of a StatefulSet and reading the history back.
func Example() {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	h := crhistory.New(c, c) // in a manager: mgr.GetClient(), mgr.GetCache()

	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "web-uid"}}
	kind := appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	var collisions int32
	for i, image := range []string{"v1", "v2"} {
		rev, _ := history.NewControllerRevision(set, kind, map[string]string{"app": "web"},
			runtime.RawExtension{Raw: []byte(`{"image":"` + image + `"}`)}, int64(i+1), &collisions)
		_, err := h.CreateControllerRevision(ctx, set, rev, &collisions)
		fmt.Println("created revision", i+1, err)
	}
	revs, _ := h.ListControllerRevisions(ctx, set, kind, labels.SelectorFromSet(labels.Set{"app": "web"}))
	history.SortControllerRevisions(revs)
	for _, r := range revs {
		fmt.Println(r.Revision, string(r.Data.Raw))
	}
	// Output:
	// created revision 1 <nil>
	// created revision 2 <nil>
	// 1 {"image":"v1"}
	// 2 {"image":"v2"}
}
