package claim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

var widgetGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

func newWidget(name, ns string, lbls map[string]string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Widget")
	u.SetName(name)
	u.SetNamespace(ns)
	u.SetUID(types.UID("uid-" + name))
	u.SetResourceVersion("7")
	u.SetLabels(lbls)
	u.SetOwnerReferences(owners)
	return u
}

// TestDynamicCustomResources claims custom resources through the dynamic
// client with JSON merge patches, which the fake tracker applies.
func TestDynamicCustomResources(t *testing.T) {
	ctx := context.Background()
	owner := newDeployment("default", "dep-uid", false)
	ours := *metav1.NewControllerRef(owner, deployKind)
	extra := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "cm-uid"}
	widgets := []*unstructured.Unstructured{
		newWidget("orphan", "default", productionLabel, extra),
		newWidget("owned-nomatch", "default", testingLabel, ours, extra),
		newWidget("owned-match", "default", productionLabel, ours),
	}
	scheme := runtime.NewScheme()
	objs := make([]runtime.Object, len(widgets))
	for i, w := range widgets {
		objs[i] = w.DeepCopy()
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{widgetGVR: "WidgetList"}, objs...)
	patcher := NewDynamicPatcher(client, widgetGVR)
	assert.Equal(t, types.MergePatchType, patcher.PatchType())

	m := NewObjectControllerRefManager[*unstructured.Unstructured](patcher, owner, productionSelector, deployKind, nil,
		WithFinalizers("example.com/cleanup"))
	claimed, err := m.Claim(ctx, widgets)
	require.NoError(t, err)
	require.Len(t, claimed, 2)
	assert.Equal(t, "orphan", claimed[0].GetName())
	assert.Equal(t, "owned-match", claimed[1].GetName())

	get := func(name string) *unstructured.Unstructured {
		u, err := client.Resource(widgetGVR).Namespace("default").Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		return u
	}
	adopted := get("orphan")
	require.Len(t, adopted.GetOwnerReferences(), 2, "merge patch keeps the other owner")
	assert.Equal(t, types.UID("dep-uid"), metav1.GetControllerOf(adopted).UID)
	assert.Equal(t, []string{"example.com/cleanup"}, adopted.GetFinalizers())

	released := get("owned-nomatch")
	assert.Nil(t, metav1.GetControllerOf(released))
	assert.Equal(t, []metav1.OwnerReference{extra}, released.GetOwnerReferences())

	for _, a := range client.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok {
			assert.Equal(t, types.MergePatchType, p.GetPatchType())
			assert.Contains(t, string(p.GetPatch()), `"resourceVersion":"7"`)
		}
	}
}

func TestDynamicPatcher(t *testing.T) {
	ctx := context.Background()
	t.Run("cluster-scoped and strategic merge", func(t *testing.T) {
		client := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
		var gotNS string
		var gotType types.PatchType
		client.PrependReactor("patch", "widgets", func(a clienttesting.Action) (bool, runtime.Object, error) {
			gotNS = a.GetNamespace()
			gotType = a.(clienttesting.PatchAction).GetPatchType()
			return true, newWidget("w", "", nil), nil
		})
		p := NewDynamicPatcher(client, widgetGVR, WithPatchType(types.StrategicMergePatchType))
		require.NoError(t, p.Patch(ctx, "", "w", []byte(`{}`)))
		assert.Equal(t, "", gotNS)
		assert.Equal(t, types.StrategicMergePatchType, gotType)
	})
	t.Run("strategic merge patcher gets upstream bodies", func(t *testing.T) {
		client := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
		var body string
		client.PrependReactor("patch", "widgets", func(a clienttesting.Action) (bool, runtime.Object, error) {
			body = string(a.(clienttesting.PatchAction).GetPatch())
			return true, newWidget("w", "default", nil), nil
		})
		owner := newDeployment("default", "dep-uid", false)
		m := NewObjectControllerRefManager[*unstructured.Unstructured](NewDynamicPatcher(client, widgetGVR, WithPatchType(types.StrategicMergePatchType)),
			owner, productionSelector, deployKind, nil)
		require.NoError(t, m.Release(ctx, newWidget("w", "default", testingLabel, *metav1.NewControllerRef(owner, deployKind))))
		assert.Equal(t, `{"metadata":{"uid":"uid-w","ownerReferences":[{"$patch":"delete","uid":"dep-uid"}]}}`, body)
	})
	t.Run("errors are wrapped and classifiable", func(t *testing.T) {
		client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{widgetGVR: "WidgetList"})
		p := NewDynamicPatcher(client, widgetGVR)
		owner := newDeployment("default", "dep-uid", false)
		m := NewObjectControllerRefManager[*unstructured.Unstructured](p, owner, productionSelector, deployKind, nil)
		// NotFound on adopt: not claimed, not an error.
		claimed, err := m.Claim(ctx, []*unstructured.Unstructured{newWidget("missing", "default", productionLabel)})
		assert.NoError(t, err)
		assert.Empty(t, claimed)
	})
	t.Run("kind from the object in messages", func(t *testing.T) {
		owner := newDeployment("default", "dep-uid", false)
		m := NewObjectControllerRefManager[*unstructured.Unstructured](NewDynamicPatcher(nil, widgetGVR), owner, productionSelector, deployKind,
			func(context.Context) error { return assert.AnError })
		err := m.Adopt(ctx, newWidget("w", "default", productionLabel))
		assert.EqualError(t, err, "can't adopt Widget default/w (uid-w): "+assert.AnError.Error())
	})
	t.Run("unsupported patch type", func(t *testing.T) {
		client := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
		assert.ErrorContains(t, NewDynamicPatcher(client, widgetGVR, WithPatchType(types.JSONPatchType)).Patch(ctx, "ns", "n", nil), "unsupported patch type")
	})
}

func TestManagerRefusesUnsupportedPatchType(t *testing.T) {
	ctx := context.Background()
	owner := newDeployment("default", "dep-uid", false)
	p := NewDynamicPatcher(dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), widgetGVR, WithPatchType(types.ApplyPatchType))
	m := NewObjectControllerRefManager[*unstructured.Unstructured](p, owner, productionSelector, deployKind, nil)
	assert.ErrorContains(t, m.Adopt(ctx, newWidget("w", "default", productionLabel)), "unsupported patch type")
	assert.ErrorContains(t, m.Release(ctx, newWidget("w", "default", productionLabel)), "unsupported patch type")
}
