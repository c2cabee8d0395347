package simcluster

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func controllerRef(kind, name, uid string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID(uid),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

// requireTwoControllersInvalid checks err is the apiserver's answer to an
// object with two controller references: 422 Invalid naming the pod, with
// one cause on metadata.ownerReferences.
func requireTwoControllersInvalid(t *testing.T, err error, name string) {
	t.Helper()
	require.Error(t, err)
	require.True(t, apierrors.IsInvalid(err), "want Invalid, got %v", err)
	var status apierrors.APIStatus
	require.ErrorAs(t, err, &status)
	details := status.Status().Details
	require.NotNil(t, details)
	assert.Equal(t, "Pod", details.Kind)
	assert.Equal(t, "", details.Group)
	assert.Equal(t, name, details.Name)
	require.Len(t, details.Causes, 1)
	assert.Equal(t, "metadata.ownerReferences", details.Causes[0].Field)
	assert.Equal(t, metav1.CauseTypeFieldValueInvalid, details.Causes[0].Type)
	assert.Contains(t, details.Causes[0].Message, "Only one reference can have Controller set to true")
	assert.Contains(t, details.Causes[0].Message, "ReplicaSet/a and ReplicaSet/b")
}

// TestTwoControllerReferencesRefused pins that the simulated apiserver, like
// kube-apiserver's metadata validation, never stores an object with more than
// one controller reference, whichever way it is written; and that the refused
// write changes nothing.
func TestTwoControllerReferencesRefused(t *testing.T) {
	ctx := context.Background()
	c := New()
	pods := c.Client().CoreV1().Pods("default")
	a, b := controllerRef("ReplicaSet", "a", "uid-a"), controllerRef("ReplicaSet", "b", "uid-b")
	notController := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "c", UID: "uid-c", Controller: ptr.To(false)}

	t.Run("create", func(t *testing.T) {
		pod := pendingPod("")
		pod.Name = "two-on-create"
		pod.OwnerReferences = []metav1.OwnerReference{a, notController, b}
		_, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		requireTwoControllersInvalid(t, err, "two-on-create")
		_, err = pods.Get(ctx, "two-on-create", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "refused pod stored: %v", err)
	})

	t.Run("create with generateName", func(t *testing.T) {
		pod := pendingPod("gen-")
		pod.OwnerReferences = []metav1.OwnerReference{a, b}
		_, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		require.Error(t, err)
		assert.True(t, apierrors.IsInvalid(err), "want Invalid, got %v", err)
		list, err := pods.List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, p := range list.Items {
			assert.NotRegexp(t, "^gen-", p.Name, "refused pod stored")
		}
	})

	t.Run("add", func(t *testing.T) {
		pod := pendingPod("")
		pod.Name = "two-on-add"
		pod.OwnerReferences = []metav1.OwnerReference{a, b}
		requireTwoControllersInvalid(t, c.Add(pod), "two-on-add")
		_, err := pods.Get(ctx, "two-on-add", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "refused pod stored: %v", err)
	})

	// One controller and any number of other owners is valid.
	pod := pendingPod("")
	pod.Name = "one-controller"
	pod.OwnerReferences = []metav1.OwnerReference{a, notController}
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)

	t.Run("update", func(t *testing.T) {
		upd := created.DeepCopy()
		upd.OwnerReferences = append(upd.OwnerReferences, b)
		_, err := pods.Update(ctx, upd, metav1.UpdateOptions{})
		requireTwoControllersInvalid(t, err, "one-controller")
		_, err = pods.UpdateStatus(ctx, upd, metav1.UpdateOptions{})
		requireTwoControllersInvalid(t, err, "one-controller")
	})

	t.Run("patch", func(t *testing.T) {
		refs, err := json.Marshal([]metav1.OwnerReference{a, b})
		require.NoError(t, err)
		patches := map[types.PatchType][]byte{
			types.MergePatchType:          []byte(`{"metadata":{"ownerReferences":` + string(refs) + `}}`),
			types.StrategicMergePatchType: []byte(`{"metadata":{"ownerReferences":` + string(refs) + `}}`),
			types.JSONPatchType:           []byte(`[{"op":"add","path":"/metadata/ownerReferences/-","value":` + mustJSON(t, b) + `}]`),
		}
		for patchType, patch := range patches {
			_, err := pods.Patch(ctx, "one-controller", patchType, patch, metav1.PatchOptions{})
			requireTwoControllersInvalid(t, err, "one-controller")
		}
	})

	stored, err := pods.Get(ctx, "one-controller", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, created.ResourceVersion, stored.ResourceVersion, "a refused write changed the pod")
	assert.Equal(t, []metav1.OwnerReference{a, notController}, stored.OwnerReferences)

	// Replacing the controller by another one is an ordinary update.
	upd := stored.DeepCopy()
	upd.OwnerReferences = []metav1.OwnerReference{b}
	_, err = pods.Update(ctx, upd, metav1.UpdateOptions{})
	require.NoError(t, err)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return string(data)
}
