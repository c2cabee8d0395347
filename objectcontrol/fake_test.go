package objectcontrol_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

func TestFake(t *testing.T) {
	ctx := context.Background()
	rc := owner()
	ref := metav1.NewControllerRef(rc, ownerKind)
	f := &objectcontrol.Fake[*v1.PersistentVolumeClaim]{}
	pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-0"}}
	created, err := f.Create(ctx, "default", pvc, rc, ref)
	require.NoError(t, err)
	assert.Equal(t, "default", created.Namespace)
	assert.Equal(t, []metav1.OwnerReference{*ref}, created.OwnerReferences)
	assert.Empty(t, pvc.OwnerReferences)
	created.Labels = map[string]string{"changed": "by caller"}
	assert.Empty(t, f.Created[0].Labels, "the returned object is not the recorded one")

	_, err = f.Create(ctx, "default", pvc, rc, &metav1.OwnerReference{})
	assert.Error(t, err, "an invalid reference is refused as Control refuses it")
	plain, err := f.Create(ctx, "other", pvc, rc, nil)
	require.NoError(t, err, "no controller reference is allowed")
	assert.Empty(t, plain.OwnerReferences)
	assert.Equal(t, []*metav1.OwnerReference{ref, nil}, f.ControllerRefs)
	assert.Equal(t, []string{"default", "other"}, f.CreateNamespaces)

	errBoom := errors.New("boom")
	f.DeleteErr = errBoom
	assert.ErrorIs(t, f.Delete(ctx, "default", "data-0", rc), errBoom)
	assert.NoError(t, f.Patch(ctx, "default", "data-0", []byte(`{}`)))
	f.Err = errBoom
	_, err = f.Create(ctx, "default", pvc, rc, ref)
	assert.ErrorIs(t, err, errBoom)
	assert.Len(t, f.Created, 3, "a create failing with Err is recorded first")
	assert.Equal(t, 4, f.CreateCallCount)
	assert.Equal(t, []string{"default/data-0"}, f.Deleted)
	assert.Equal(t, []string{"default/data-0"}, f.Patched)
	creates, deletes, patches := f.Counts()
	assert.Equal(t, [3]int{3, 1, 1}, [3]int{creates, deletes, patches})

	f.Clear()
	creates, deletes, patches = f.Counts()
	assert.Equal(t, [3]int{0, 0, 0}, [3]int{creates, deletes, patches})
	assert.Zero(t, f.CreateCallCount)
	assert.ErrorIs(t, f.Patch(ctx, "default", "data-0", nil), errBoom, "Clear keeps the injected errors")
}

func TestFakeCreateLimit(t *testing.T) {
	ctx := context.Background()
	rc := owner()
	f := &objectcontrol.Fake[*v1.ConfigMap]{CreateLimit: 2}
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for range 5 {
		wg.Go(func() {
			_, err := f.Create(ctx, "default", &v1.ConfigMap{}, rc, nil)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if err != nil {
			assert.ErrorContains(t, err, "limit 2 already reached")
			failed++
		}
	}
	assert.Equal(t, 3, failed)
	creates, _, _ := f.Counts()
	assert.Equal(t, 2, creates, "refused creates are not recorded")
	f.Lock()
	assert.Equal(t, 5, f.CreateCallCount)
	f.Unlock()
}
