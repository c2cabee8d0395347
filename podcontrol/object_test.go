package podcontrol

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
)

// The deprecated names for the controls of other kinds keep working; their
// behaviour is tested in package objectcontrol.
func TestDeprecatedObjectControlNames(t *testing.T) {
	ctx := context.Background()
	rc := controller("default", "123", false)
	ref := metav1.NewControllerRef(rc, fakeKind)
	client := fake.NewClientset()
	rec := record.NewFakeRecorder(10)
	var sc ObjectControl[*v1.Service] = NewObjectControl("Service", func(ns string) TypedClient[*v1.Service] { return client.CoreV1().Services(ns) },
		rec, types.StrategicMergePatchType, WithEventReasons(EventReasons{SuccessfulCreate: "ServiceCreated"}))
	created, err := sc.Create(ctx, "default", &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, rc, ref)
	require.NoError(t, err)
	assert.Equal(t, []metav1.OwnerReference{*ref}, created.OwnerReferences)
	assert.Equal(t, []string{"Normal ServiceCreated Created Service: web"}, drain(rec))
	assert.Equal(t, types.StrategicMergePatchType, sc.(*RealObjectControl[*v1.Service]).PatchType())

	f := &FakeObjectControl[*v1.PersistentVolumeClaim]{CreateLimit: 1}
	var _ ObjectControl[*v1.PersistentVolumeClaim] = f
	_, err = f.Create(ctx, "default", &v1.PersistentVolumeClaim{}, rc, nil)
	require.NoError(t, err)
	assert.Len(t, f.Created, 1)
}
