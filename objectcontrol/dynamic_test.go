package objectcontrol_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

var (
	widgets       = schema.GroupVersionResource{Group: "example.io", Version: "v1", Resource: "widgets"}
	clusterThings = schema.GroupVersionResource{Group: "example.io", Version: "v1", Resource: "things"}
)

func widget(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"size": int64(1)},
	}}
}

func TestDynamicWriter(t *testing.T) {
	ctx := context.Background()
	rc := owner()
	ref := metav1.NewControllerRef(rc, ownerKind)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{widgets: "WidgetList", clusterThings: "ThingList"})
	rec := record.NewFakeRecorder(10)
	c := objectcontrol.New("Widget", objectcontrol.DynamicWriter(dyn, widgets), rec, types.MergePatchType)

	w := widget("w1")
	created, err := c.Create(ctx, "default", w, rc, ref)
	require.NoError(t, err)
	assert.Equal(t, []metav1.OwnerReference{*ref}, created.GetOwnerReferences())
	assert.Empty(t, w.GetOwnerReferences(), "the caller's object is not modified")
	stored, err := dyn.Resource(widgets).Namespace("default").Get(ctx, "w1", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, ref.UID, metav1.GetControllerOf(stored).UID)
	assert.Equal(t, []string{"Normal SuccessfulCreate Created Widget: w1"}, drain(rec))

	patched, err := c.PatchObject(ctx, "default", "w1", []byte(`{"metadata":{"labels":{"a":"b"}}}`))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "b"}, patched.GetLabels())

	// The object itself ("") and a subresource are both patched: a
	// childset in-place update writes through these.
	patched, err = c.PatchSubresource(ctx, "default", "w1", "", types.MergePatchType, []byte(`{"spec":{"size":2}}`))
	require.NoError(t, err)
	size, _, _ := unstructured.NestedInt64(patched.Object, "spec", "size")
	assert.Equal(t, int64(2), size)
	_, err = c.PatchSubresource(ctx, "default", "w1", "status", types.MergePatchType, []byte(`{"status":{"ok":true}}`))
	require.NoError(t, err)
	last := dyn.Actions()[len(dyn.Actions())-1]
	assert.Equal(t, "status", last.GetSubresource(), "the subresource is the request's")

	require.NoError(t, c.Delete(ctx, "default", "w1", rc))
	_, err = dyn.Resource(widgets).Namespace("default").Get(ctx, "w1", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "deleted: %v", err)
	assert.True(t, apierrors.IsNotFound(c.Delete(ctx, "default", "w1", rc)))
	assert.Equal(t, []string{"Normal SuccessfulDelete Deleted Widget: w1"}, drain(rec))

	// An object without its type is refused before any request, with a
	// message that says why.
	bare := widget("w2")
	bare.SetKind("")
	before := len(dyn.Actions())
	_, err = c.Create(ctx, "default", bare, rc, ref)
	assert.ErrorContains(t, err, "needs apiVersion and kind")
	assert.Len(t, dyn.Actions(), before, "no request for an object without its type")

	// An empty namespace addresses a cluster-scoped resource.
	things := objectcontrol.New("Thing", objectcontrol.DynamicWriter(dyn, clusterThings), nil, types.MergePatchType)
	thing := widget("t1")
	thing.SetKind("Thing")
	_, err = things.Create(ctx, "", thing, rc, nil)
	require.NoError(t, err)
	_, err = dyn.Resource(clusterThings).Get(ctx, "t1", metav1.GetOptions{})
	require.NoError(t, err)

	assert.PanicsWithValue(t, "objectcontrol: DynamicWriter: nil client", func() { objectcontrol.DynamicWriter(nil, widgets) })
}
