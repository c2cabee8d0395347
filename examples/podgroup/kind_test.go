package podgroup_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/examples/podgroup"
)

func TestKindReadsSpec(t *testing.T) {
	k := podgroup.NewKind(nil, cache.NewIndexer(cache.MetaNamespaceKeyFunc, nil))
	pg := newGroup("web", 7)
	require.EqualValues(t, 7, k.Replicas(pg))
	sel, err := k.Selector(pg)
	require.NoError(t, err)
	require.Equal(t, "app=web", sel.String())
	require.Equal(t, "web", k.Template(pg).Labels["app"])
	require.Equal(t, "PodGroup", k.GroupVersionKind().Kind)

	unstructured.RemoveNestedField(pg.Object, "spec", "replicas")
	require.EqualValues(t, 1, k.Replicas(pg), "missing spec.replicas defaults to 1")
	pg.Object["spec"].(map[string]any)["replicas"] = "three"
	require.EqualValues(t, 1, k.Replicas(pg), "a non-integer spec.replicas gives the default")
	pg.Object["spec"].(map[string]any)["replicas"] = int64(1) << 40
	require.EqualValues(t, int32(1<<31-1), k.Replicas(pg), "clamped to int32")
}

func TestKindRejectsBadSelectorAndTemplate(t *testing.T) {
	k := podgroup.NewKind(nil, cache.NewIndexer(cache.MetaNamespaceKeyFunc, nil))
	for name, sel := range map[string]any{
		"missing":   nil,
		"empty":     map[string]any{},
		"malformed": map[string]any{"matchLabels": "app=web"},
		"bad value": map[string]any{"matchLabels": map[string]any{"app": "not valid!"}},
	} {
		pg := newGroup("web", 1)
		if sel == nil {
			unstructured.RemoveNestedField(pg.Object, "spec", "selector")
		} else {
			pg.Object["spec"].(map[string]any)["selector"] = sel
		}
		_, err := k.Selector(pg)
		require.Error(t, err, name)
	}
	pg := newGroup("web", 1)
	pg.Object["spec"].(map[string]any)["template"] = "nope"
	require.Nil(t, k.Template(pg))
}

func TestKindGetAndUpdateStatus(t *testing.T) {
	ctx := context.Background()
	pg := newGroup("web", 2)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{podgroup.Resource: "PodGroupList"}, pg)
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, nil)
	k := podgroup.NewKind(dyn, indexer)

	_, err := k.Get("default", "web")
	require.Error(t, err, "not cached yet")
	require.NoError(t, indexer.Add(pg))
	cached, err := k.Get("default", "web")
	require.NoError(t, err)

	got, err := k.UpdateStatus(ctx, cached, podsetStatusInput())
	require.NoError(t, err)
	require.Nil(t, cached.Object["status"], "the cached object is not modified")
	stored, err := dyn.Resource(podgroup.Resource).Namespace("default").Get(ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, got.Object["status"], stored.Object["status"])
	require.Equal(t, map[string]any{"replicas": int64(0), "fullyLabeledReplicas": int64(0), "readyReplicas": int64(0),
		"availableReplicas": int64(0), "observedGeneration": int64(1)}, stored.Object["status"])
	before := len(dyn.Actions())
	_, err = k.UpdateStatus(ctx, stored, podsetStatusInput())
	require.NoError(t, err)
	require.Len(t, dyn.Actions(), before, "an unchanged status is not written again")
}

func TestKindSetStatusReplacesStatus(t *testing.T) {
	pg := newGroup("web", 2)
	pg.SetGeneration(4)
	pg.Object["status"] = map[string]any{"replicas": int64(9), "stale": "field"}
	podgroup.Kind{}.SetStatus(pg, podsetStatusInput())
	require.Equal(t, map[string]any{"replicas": int64(0), "fullyLabeledReplicas": int64(0), "readyReplicas": int64(0),
		"availableReplicas": int64(0), "observedGeneration": int64(4)}, pg.Object["status"])
}
