package crclient_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/crclient"
)

// UpdateStatus writes only a change, retries a failed write once on a
// fresh read, and reports a failed re-read as an error.
func TestUpdateStatus(t *testing.T) {
	ctx := context.Background()
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	writes, conflicts := 0, 1
	c := fake.NewClientBuilder().WithObjects(rs).WithStatusSubresource(rs).WithInterceptorFuncs(interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			writes++
			if conflicts > 0 {
				conflicts--
				return apierrors.NewConflict(schema.GroupResource{Resource: "replicasets"}, "web", errors.New("stale"))
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	}).Build()
	cached := &appsv1.ReplicaSet{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(rs), cached))
	reread := func(ctx context.Context) (*appsv1.ReplicaSet, error) {
		fresh := &appsv1.ReplicaSet{}
		return fresh, c.Get(ctx, client.ObjectKeyFromObject(rs), fresh)
	}
	setTo := func(n int32) func(*appsv1.ReplicaSet) { return func(o *appsv1.ReplicaSet) { o.Status.Replicas = n } }

	same, err := crclient.UpdateStatus(ctx, c, cached, setTo(0), reread)
	require.NoError(t, err)
	assert.Same(t, cached, same, "nothing changed: nothing written")
	assert.Zero(t, writes)

	updated, err := crclient.UpdateStatus(ctx, c, cached, setTo(3), reread)
	require.NoError(t, err)
	assert.EqualValues(t, 3, updated.Status.Replicas)
	assert.Equal(t, 2, writes, "a conflict, then the write on a fresh read")
	assert.Zero(t, cached.Status.Replicas, "the cached object is left alone")

	conflicts = 1
	_, err = crclient.UpdateStatus(ctx, c, cached, setTo(4), func(context.Context) (*appsv1.ReplicaSet, error) {
		return nil, errors.New("unreachable")
	})
	assert.ErrorContains(t, err, "re-reading ns/web for its status: unreachable")
}
