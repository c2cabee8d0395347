package objectcontrol_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// A typed nil owner is refused with ErrNilOwner before any API call, by
// Create and Delete alike; the previous code panicked reading its name (or
// recording an event against it). A nil interface still means "no owner"
// for Create, which records no event.
func TestTypedNilOwnerIsRefused(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(&v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"}})
	rec := record.NewFakeRecorder(10)
	sc := serviceControl(client, rec)
	client.ClearActions()
	var typedNil runtime.Object = (*v1.ReplicationController)(nil)

	var err error
	require.NotPanics(t, func() {
		_, err = sc.Create(ctx, "default", &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "new"}}, typedNil, nil)
	})
	assert.ErrorIs(t, err, objectcontrol.ErrNilOwner)
	require.NotPanics(t, func() { err = sc.Delete(ctx, "default", "s", typedNil) })
	assert.ErrorIs(t, err, objectcontrol.ErrNilOwner)
	assert.Empty(t, client.Actions())
	assert.Empty(t, drain(rec))

	assert.NoError(t, objectcontrol.CheckOwner(nil))
	assert.NoError(t, objectcontrol.CheckOwner(owner()))
	_, err = sc.Create(ctx, "default", &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ownerless"}}, nil, nil)
	assert.NoError(t, err)
}
