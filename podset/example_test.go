package podset_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// podGroups is a custom resource that owns pods: spec.replicas,
// spec.selector (matchLabels) and spec.template, like a ReplicaSet.
var podGroups = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "podgroups"}

// PodGroupKind is the whole adapter: podset does the rest.
type PodGroupKind struct {
	client  dynamic.Interface
	indexer cache.Indexer
}

func (PodGroupKind) GroupVersionKind() schema.GroupVersionKind {
	return podGroups.GroupVersion().WithKind("PodGroup")
}

func (PodGroupKind) Replicas(pg *unstructured.Unstructured) int32 {
	n, found, err := unstructured.NestedInt64(pg.Object, "spec", "replicas")
	if !found || err != nil {
		return 1 // the neutral value upstream's defaulting gives a ReplicaSet
	}
	return int32(n)
}

func (PodGroupKind) Selector(pg *unstructured.Unstructured) (labels.Selector, error) {
	m, _, err := unstructured.NestedStringMap(pg.Object, "spec", "selector", "matchLabels")
	if err != nil || len(m) == 0 {
		return nil, fmt.Errorf("spec.selector.matchLabels must be a non-empty map: %v", err)
	}
	return labels.ValidatedSelectorFromSet(m)
}

func (PodGroupKind) Template(pg *unstructured.Unstructured) *v1.PodTemplateSpec {
	raw, _, _ := unstructured.NestedMap(pg.Object, "spec", "template")
	var t v1.PodTemplateSpec
	if runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &t) != nil {
		return nil // creations then fail with pod control's error
	}
	return &t
}

func (PodGroupKind) MinReadySeconds(*unstructured.Unstructured) int32 { return 0 }

func (k PodGroupKind) Get(namespace, name string) (*unstructured.Unstructured, error) {
	obj, ok, err := k.indexer.GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return nil, apierrors.NewNotFound(podGroups.GroupResource(), name)
	}
	return obj.(*unstructured.Unstructured), nil
}

func (k PodGroupKind) GetUncached(ctx context.Context, namespace, name string) (*unstructured.Unstructured, error) {
	return k.client.Resource(podGroups).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (k PodGroupKind) UpdateStatus(ctx context.Context, pg *unstructured.Unstructured, in podset.StatusInput) (*unstructured.Unstructured, error) {
	counts := in.Counts()
	pg = pg.DeepCopy()
	_ = unstructured.SetNestedField(pg.Object, int64(counts.Replicas), "status", "replicas")
	_ = unstructured.SetNestedField(pg.Object, int64(counts.ReadyReplicas), "status", "readyReplicas")
	return k.client.Resource(podGroups).Namespace(pg.GetNamespace()).UpdateStatus(ctx, pg, metav1.UpdateOptions{})
}

// A complete controller for a custom kind: the adapter above, the informers,
// podset.New and Run. It runs on a simulated cluster, which starts the pods.
func Example() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	cluster := simcluster.New(simcluster.WithStartupDelay(10 * time.Millisecond))
	go func() { _ = cluster.Run(ctx) }()

	group := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "PodGroup",
		"metadata": map[string]any{"name": "web", "namespace": "default", "uid": "pg-1"},
		"spec": map[string]any{
			"replicas": int64(3),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
			},
		},
	}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{podGroups: "PodGroupList"}, group)
	groupInformer := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0).ForResource(podGroups).Informer()
	pods := informers.NewSharedInformerFactory(cluster.Client(), 0)

	kind := PodGroupKind{client: dyn, indexer: groupInformer.GetIndexer()}
	c, err := podset.New(ctx, cluster.Client(), pods.Core().V1().Pods(), groupInformer, podset.Kind[*unstructured.Unstructured](kind))
	if err != nil {
		fmt.Println(err)
		return
	}
	pods.Start(ctx.Done())
	go groupInformer.Run(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()

	for ready := int64(0); ready != 3; time.Sleep(10 * time.Millisecond) {
		pg, _ := dyn.Resource(podGroups).Namespace("default").Get(ctx, "web", metav1.GetOptions{})
		ready, _, _ = unstructured.NestedInt64(pg.Object, "status", "readyReplicas")
	}
	list, _ := cluster.Client().CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	fmt.Println("pods:", len(list.Items), "owner:", list.Items[0].OwnerReferences[0].Kind)
	c.Drain()
	fmt.Println("stopped:", <-done)
	// Output:
	// pods: 3 owner: PodGroup
	// stopped: <nil>
}
