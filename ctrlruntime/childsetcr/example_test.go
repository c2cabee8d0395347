package childsetcr_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
)

// configSet is the owner adapter of the examples: a StatefulSet stands in
// for a custom "ConfigSet" that wants spec.replicas ConfigMaps.
type configSet struct{}

func (configSet) GroupVersionKind() schema.GroupVersionKind {
	return appsv1.SchemeGroupVersion.WithKind("StatefulSet")
}
func (configSet) Replicas(s *appsv1.StatefulSet) int32 { return ptr.Deref(s.Spec.Replicas, 1) }
func (configSet) Selector(s *appsv1.StatefulSet) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(s.Spec.Selector)
}
func (configSet) NewChild(s *appsv1.StatefulSet) (*corev1.ConfigMap, error) {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: s.Spec.Template.Labels}}, nil
}

// configMaps is the child adapter: a ConfigMap is always ready.
type configMaps struct{}

func (configMaps) Ready(*corev1.ConfigMap) bool { return true }

// Adding the controller to a manager: one call. Nothing talks to the API
// server until mgr.Start.
func Example() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = childsetcr.SetupWithManager[*appsv1.StatefulSet, *corev1.ConfigMap](mgr, configSet{}, configMaps{},
		childsetcr.WithName("configset"),
		childsetcr.WithChildSetOptions(childset.WithIndexedNames(nil)))
	fmt.Println("registered:", err == nil)
	// Output: registered: true
}

// The same core over controller-runtime's fake client, as a unit test of
// the adapters would run it.
func ExampleNewCore() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithIndex(&corev1.ConfigMap{}, childsetcr.ControllerField, childsetcr.IndexByController).
		WithObjects(&appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train", UID: types.UID("train-uid")},
			Spec: appsv1.StatefulSetSpec{
				Replicas: ptr.To[int32](2),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"set": "train"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"set": "train"}}},
			},
		}).Build()
	core, err := childsetcr.NewCore(c, nil, nil, configSet{}, configMaps{}, childset.WithIndexedNames(nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := childsetcr.NewReconciler(core).Reconcile(context.Background(),
		reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ml", Name: "train"}})
	fmt.Println("requeue after:", res.RequeueAfter, "error:", err)
	list := &corev1.ConfigMapList{}
	_ = c.List(context.Background(), list, client.InNamespace("ml"))
	for _, cm := range list.Items {
		fmt.Println(cm.Name, "owned by", metav1.GetControllerOf(&cm).Name)
	}
	// Output:
	// requeue after: 0s error: <nil>
	// train-0 owned by train
	// train-1 owned by train
}

// configPool is configSet with its counts in the owner's status: with
// configMaps, the whole adapter of a new kind.
type configPool struct{ configSet }

func (configPool) SetStatus(s *appsv1.StatefulSet, st childset.Status) {
	s.Status.Replicas, s.Status.ReadyReplicas = st.Replicas, st.ReadyReplicas
	s.Status.AvailableReplicas, s.Status.ObservedGeneration = st.AvailableReplicas, st.ObservedGeneration
}

// A Spec that sets the status has it written to the status subresource
// after every sync that changes it.
func ExampleStatusSetter() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	owner := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "pool", UID: types.UID("pool-uid"), Generation: 3},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"set": "pool"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"set": "pool"}}},
		},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(owner).WithStatusSubresource(owner).
		WithIndex(&corev1.ConfigMap{}, childsetcr.ControllerField, childsetcr.IndexByController).Build()
	core, err := childsetcr.NewCore(c, nil, nil, configPool{}, configMaps{})
	if err != nil {
		fmt.Println(err)
		return
	}
	r := childsetcr.NewReconciler(core)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ml", Name: "pool"}}
	_, _ = r.Reconcile(context.Background(), req) // creates two ConfigMaps; saw none
	_, _ = r.Reconcile(context.Background(), req) // sees them
	_ = c.Get(context.Background(), req.NamespacedName, owner)
	fmt.Println("replicas:", owner.Status.Replicas, "ready:", owner.Status.ReadyReplicas, "observed generation:", owner.Status.ObservedGeneration)
	// Output: replicas: 2 ready: 2 observed generation: 3
}
