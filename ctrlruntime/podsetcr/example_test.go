package podsetcr_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/podsetcr"
	"github.com/ctrlkit/ctrlkit/examples/podgroup"
	"github.com/ctrlkit/ctrlkit/podset"
)

// A whole PodGroup controller in a manager with leader election. The
// library's podgroup.Kind is the Describer; PodGroups are handled as
// unstructured objects, so the scheme only needs to name them. It needs a
// cluster with the CRD (podgroup.CRD), so it is compiled, not run.
func ExampleSetupWithManager() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	gvk := podgroup.Kind{}.GroupVersionKind()
	scheme.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
	scheme.AddKnownTypeWithName(gvk.GroupVersion().WithKind("PodGroupList"), &unstructured.UnstructuredList{})
	metav1.AddToGroupVersion(scheme, gvk.GroupVersion())

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:           scheme,
		LeaderElection:   true,
		LeaderElectionID: "podgroup-controller.example.ctrlkit.io",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := podsetcr.SetupWithManager[*unstructured.Unstructured](mgr, podgroup.Kind{},
		podsetcr.WithPodSetOptions(podset.WithWorkers(10))); err != nil {
		fmt.Println(err)
		return
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fmt.Println(err)
	}
}

// Kind writes a status only when the Describer changed it. Here with
// controller-runtime's fake client standing in for the manager's cache,
// API reader and client.
func ExampleNewKind() {
	scheme := runtime.NewScheme()
	gvk := podgroup.Kind{}.GroupVersionKind()
	scheme.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
	group := &unstructured.Unstructured{}
	group.SetGroupVersionKind(gvk)
	group.SetNamespace("ns")
	group.SetName("web")
	group.SetGeneration(2)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(group).WithStatusSubresource(group).Build()

	kind, err := podsetcr.NewKind[*unstructured.Unstructured](podgroup.Kind{}, c, c, c, scheme)
	if err != nil {
		fmt.Println(err)
		return
	}
	cached, _ := kind.Get("ns", "web")
	ready := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	updated, err := kind.UpdateStatus(context.Background(), cached, podset.StatusInput{Active: []*corev1.Pod{ready, {}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	status, _, _ := unstructured.NestedMap(updated.Object, "status")
	fmt.Println(status["replicas"], status["readyReplicas"], status["observedGeneration"])
	// Output: 2 1 2
}
