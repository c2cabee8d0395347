package podcontrol

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
)

func serviceControl(client *fake.Clientset, rec record.EventRecorder, opts ...Option) *RealObjectControl[*v1.Service] {
	return NewObjectControl("Service", func(ns string) TypedClient[*v1.Service] { return client.CoreV1().Services(ns) },
		rec, types.StrategicMergePatchType, opts...)
}

func TestRealObjectControl(t *testing.T) {
	ctx := context.Background()
	rc := controller("default", "123", false)
	ref := metav1.NewControllerRef(rc, fakeKind)
	client := fake.NewClientset()
	rec := record.NewFakeRecorder(10)
	sc := serviceControl(client, rec)

	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	created, err := sc.Create(ctx, "default", svc, rc, ref)
	require.NoError(t, err)
	assert.Equal(t, []metav1.OwnerReference{*ref}, created.OwnerReferences)
	assert.Empty(t, svc.OwnerReferences, "the caller's object is not modified")
	assert.Equal(t, []string{"Normal SuccessfulCreate Created Service: web"}, drain(rec))

	_, err = sc.Create(ctx, "default", svc, rc, ref)
	assert.True(t, apierrors.IsAlreadyExists(err))
	assert.Equal(t, []string{"Warning FailedCreate Error creating: " + err.Error()}, drain(rec))
	_, err = sc.Create(ctx, "default", svc, rc, nil)
	assert.ErrorContains(t, err, "controllerRef is nil")

	require.NoError(t, sc.Patch(ctx, "default", "web", []byte(`{"metadata":{"labels":{"a":"b"}}}`)))
	got, err := client.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "b", got.Labels["a"])
	assert.Equal(t, types.StrategicMergePatchType, sc.PatchType())

	require.NoError(t, sc.Delete(ctx, "default", "web", rc))
	assert.Equal(t, []string{"Normal SuccessfulDelete Deleted Service: web"}, drain(rec))
	assert.True(t, apierrors.IsNotFound(sc.Delete(ctx, "default", "web", rc)), "NotFound returned by default")
	assert.NoError(t, serviceControl(client, rec, WithNotFoundAsSuccess()).Delete(ctx, "default", "web", rc))
	assert.Empty(t, drain(rec))

	client.PrependReactor("delete", "services", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("boom")
	})
	err = serviceControl(client, rec, WithEventReasons(EventReasons{FailedDelete: "ServiceDeleteFailed"})).Delete(ctx, "default", "web", rc)
	assert.EqualError(t, err, "unable to delete Service: boom")
	assert.Equal(t, []string{"Warning ServiceDeleteFailed Error deleting: boom"}, drain(rec))
}

func TestFakeObjectControl(t *testing.T) {
	ctx := context.Background()
	rc := controller("default", "123", false)
	ref := metav1.NewControllerRef(rc, fakeKind)
	f := &FakeObjectControl[*v1.PersistentVolumeClaim]{}
	pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-0"}}
	created, err := f.Create(ctx, "default", pvc, rc, ref)
	require.NoError(t, err)
	assert.Equal(t, "default", created.Namespace)
	assert.Equal(t, []metav1.OwnerReference{*ref}, created.OwnerReferences)
	assert.Empty(t, pvc.OwnerReferences)
	_, err = f.Create(ctx, "default", pvc, rc, nil)
	assert.Error(t, err)

	errBoom := errors.New("boom")
	f.DeleteErr = errBoom
	assert.ErrorIs(t, f.Delete(ctx, "default", "data-0", rc), errBoom)
	assert.NoError(t, f.Patch(ctx, "default", "data-0", []byte(`{}`)))
	f.Err = errBoom
	_, err = f.Create(ctx, "default", pvc, rc, ref)
	assert.ErrorIs(t, err, errBoom)
	assert.Len(t, f.Created, 2)
	assert.Equal(t, []string{"default/data-0"}, f.Deleted)
	assert.Equal(t, []string{"default/data-0"}, f.Patched)
}
