package childset_test

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// workerSet is the owner adapter of the example: a StatefulSet stands in
// for a "WorkerSet" that wants one ConfigMap per worker.
type workerSet struct{ store cache.Store }

func (w workerSet) Get(namespace, name string) (*appsv1.StatefulSet, error) {
	obj, ok, err := w.store.GetByKey(namespace + "/" + name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, name)
	}
	return obj.(*appsv1.StatefulSet), nil
}

func (workerSet) GroupVersionKind() schema.GroupVersionKind {
	return appsv1.SchemeGroupVersion.WithKind("StatefulSet")
}
func (workerSet) Replicas(s *appsv1.StatefulSet) int32 { return *s.Spec.Replicas }
func (workerSet) Selector(s *appsv1.StatefulSet) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(s.Spec.Selector)
}
func (workerSet) NewChild(s *appsv1.StatefulSet) (*v1.ConfigMap, error) {
	return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: s.Spec.Template.Labels},
		Data: map[string]string{"role": "worker"}}, nil
}

// workerConfig is the child adapter: ConfigMaps are always ready.
type workerConfig struct{ childset.Lister[*v1.ConfigMap] }

func (workerConfig) Ready(*v1.ConfigMap) bool { return true }

// Example keeps three indexed ConfigMaps for a set called "train".
func Example() {
	client := fake.NewClientset()
	owners := cache.NewStore(cache.MetaNamespaceKeyFunc)
	children := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{childset.ControllerIndex: claim.IndexByController})

	replicas := int32(3)
	_ = owners.Add(&appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train", UID: "train-uid"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"set": "train"}},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"set": "train"}}},
		},
	})
	configMaps := objectcontrol.New("ConfigMap", objectcontrol.TypedWriter(
		func(ns string) objectcontrol.TypedClient[*v1.ConfigMap] { return client.CoreV1().ConfigMaps(ns) }),
		nil, types.StrategicMergePatchType)

	r := childset.NewReconciler(workerSet{owners}, workerConfig{childset.IndexerLister[*v1.ConfigMap](children)},
		configMaps, childset.WithIndexedNames(nil))
	res, err := r.Reconcile(context.Background(), "ml/train")
	fmt.Println("requeue after:", res.RequeueAfter, "error:", err)

	list, _ := client.CoreV1().ConfigMaps("ml").List(context.Background(), metav1.ListOptions{})
	slices.SortFunc(list.Items, func(a, b v1.ConfigMap) int { return strings.Compare(a.Name, b.Name) })
	for _, cm := range list.Items {
		fmt.Println(cm.Name, "index", cm.Labels[childset.IndexLabel], "owner", metav1.GetControllerOf(&cm).Name)
	}
	// Output:
	// requeue after: 0s error: <nil>
	// train-0 index 0 owner train
	// train-1 index 1 owner train
	// train-2 index 2 owner train
}

// drainingWorkerSet is workerSet whose owners name, in an annotation, the
// workers to remove first on a scale-down.
type drainingWorkerSet struct{ workerSet }

func (drainingWorkerSet) ChildrenToDeleteFirst(s *appsv1.StatefulSet) []string {
	return strings.Split(s.Annotations["example.ctrlkit.io/delete-first"], ",")
}

// ExampleScaleInSpec scales an interchangeable set of four ConfigMaps down
// to two, deleting the two its owner names.
func ExampleScaleInSpec() {
	ctx := context.Background()
	client := fake.NewClientset()
	owners := cache.NewStore(cache.MetaNamespaceKeyFunc)
	children := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{childset.ControllerIndex: claim.IndexByController})

	replicas := int32(2)
	owner := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train", UID: "train-uid",
			Annotations: map[string]string{"example.ctrlkit.io/delete-first": "worker-b,worker-d"}},
		Spec: appsv1.StatefulSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"set": "train"}},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"set": "train"}}},
		},
	}
	_ = owners.Add(owner)
	ref := metav1.NewControllerRef(owner, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))
	for _, name := range []string{"worker-a", "worker-b", "worker-c", "worker-d"} {
		cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, UID: types.UID(name),
			Labels: map[string]string{"set": "train"}, OwnerReferences: []metav1.OwnerReference{*ref}}}
		_, _ = client.CoreV1().ConfigMaps("ml").Create(ctx, cm, metav1.CreateOptions{})
		_ = children.Add(cm)
	}
	configMaps := objectcontrol.New("ConfigMap", objectcontrol.TypedWriter(
		func(ns string) objectcontrol.TypedClient[*v1.ConfigMap] { return client.CoreV1().ConfigMaps(ns) }),
		nil, types.StrategicMergePatchType)

	r := childset.NewReconciler(drainingWorkerSet{workerSet{owners}}, workerConfig{childset.IndexerLister[*v1.ConfigMap](children)},
		configMaps)
	_, err := r.Reconcile(ctx, "ml/train")
	fmt.Println("error:", err)

	list, _ := client.CoreV1().ConfigMaps("ml").List(ctx, metav1.ListOptions{})
	slices.SortFunc(list.Items, func(a, b v1.ConfigMap) int { return strings.Compare(a.Name, b.Name) })
	for _, cm := range list.Items {
		fmt.Println(cm.Name)
	}
	// Output:
	// error: <nil>
	// worker-a
	// worker-c
}
