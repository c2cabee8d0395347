package childset_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/expectations"
)

type storeAt struct{ rv atomic.Value }

func (s *storeAt) LastStoreSyncResourceVersion() string { return s.rv.Load().(string) }

// stubWriter answers every create and patch with the object at rv, or
// with err.
type stubWriter struct {
	rv  string
	ref *metav1.OwnerReference
	err error
}

func (w stubWriter) answer(name string) (*v1.ConfigMap, error) {
	if w.err != nil {
		return nil, w.err
	}
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: w.rv}}
	if w.ref != nil {
		cm.OwnerReferences = []metav1.OwnerReference{*w.ref}
	}
	return cm, nil
}

func (w stubWriter) Create(_ context.Context, _ string, obj *v1.ConfigMap) (*v1.ConfigMap, error) {
	return w.answer(obj.Name)
}
func (w stubWriter) Delete(context.Context, string, string) error { return w.err }
func (w stubWriter) Patch(_ context.Context, _, name string, _ types.PatchType, _ []byte) (*v1.ConfigMap, error) {
	return w.answer(name)
}

// Every create or adoption the API server answers is recorded against the
// owner its controller reference names; failures, releases and disabled
// recording are not.
func TestRecordingWriter(t *testing.T) {
	ctx := context.Background()
	gr := schema.GroupResource{Resource: "configmaps"}
	store := &storeAt{}
	store.rv.Store("10")
	guard := consistency.NewGuard(consistency.WithStore(gr, store))
	owner := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "owner", UID: "u1"}}
	ref := metav1.NewControllerRef(owner, v1.SchemeGroupVersion.WithKind("ConfigMap"))
	key := expectations.OwnerKeyFor(owner)
	enabled := true
	w := func(inner stubWriter) childset.RecordingWriter[*v1.ConfigMap] {
		return childset.RecordingWriter[*v1.ConfigMap]{Writer: inner, Guard: guard, Resource: gr, Enabled: func() bool { return enabled }}
	}

	_, err := w(stubWriter{err: errors.New("refused")}).Create(ctx, "ns", &v1.ConfigMap{})
	require.Error(t, err)
	_, err = w(stubWriter{rv: "30"}).Patch(ctx, "ns", "released", types.MergePatchType, nil)
	require.NoError(t, err)
	enabled = false
	_, err = w(stubWriter{rv: "30", ref: ref}).Create(ctx, "ns", &v1.ConfigMap{})
	require.NoError(t, err)
	require.NoError(t, guard.EnsureReady(key), "a failure, a release and a disabled write record nothing")

	enabled = true
	created, err := w(stubWriter{rv: "20", ref: ref}).Create(ctx, "ns", &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}})
	require.NoError(t, err)
	assert.Equal(t, "20", created.ResourceVersion, "the server's answer is returned")
	require.ErrorIs(t, guard.EnsureReady(key), consistency.ErrStaleCache, "the store is at 10, the create at 20")
	_, err = w(stubWriter{rv: "25", ref: ref}).Patch(ctx, "ns", "adopted", types.MergePatchType, nil)
	require.NoError(t, err)
	store.rv.Store("20")
	require.ErrorIs(t, guard.EnsureReady(key), consistency.ErrStaleCache, "the adoption at 25 is still ahead")
	store.rv.Store("25")
	require.NoError(t, guard.EnsureReady(key))

	nilGuard := childset.RecordingWriter[*v1.ConfigMap]{Writer: stubWriter{rv: "30", ref: ref}}
	_, err = nilGuard.Create(ctx, "ns", &v1.ConfigMap{})
	require.NoError(t, err, "a nil guard records nothing")
}
