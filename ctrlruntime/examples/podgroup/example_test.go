package podgroup_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/podgroup"
)

// Reconciling one PodGroup against controller-runtime's fake client. In a
// manager, NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), recorder)
// .SetupWithManager(mgr) is all the wiring (see cmd/podgroup-controller).
func Example() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = podgroup.AddToScheme(scheme)

	group := podgroup.New()
	group.SetNamespace("ns")
	group.SetName("web")
	group.SetUID("uid-web")
	group.Object["spec"] = map[string]any{
		"replicas": int64(3),
		"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}},
		},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(group).WithStatusSubresource(podgroup.New()).Build()

	r := podgroup.NewReconciler(c, c, nil)
	key := client.ObjectKeyFromObject(group)
	for range 2 { // the second pass waits: the creations are not yet observed
		if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: key}); err != nil {
			fmt.Println(err)
		}
	}
	pods := &corev1.PodList{}
	_ = c.List(context.Background(), pods, client.InNamespace("ns"))
	_ = c.Get(context.Background(), key, group)
	status, _, _ := unstructured.NestedInt64(group.Object, "status", "replicas")
	fmt.Println("pods:", len(pods.Items), "status.replicas:", status)
	// Output: pods: 3 status.replicas: 3
}
