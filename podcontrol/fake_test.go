package podcontrol

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFakePodControl(t *testing.T) {
	ctx := context.Background()
	rc := controller("default", "123", false)
	ref := metav1.NewControllerRef(rc, fakeKind)
	errBoom := errors.New("boom")

	t.Run("records creates without touching the template", func(t *testing.T) {
		f := &FakePodControl{}
		tmpl := podTemplate()
		require.NoError(t, f.CreatePods(ctx, "ns1", tmpl, rc, ref))
		require.NoError(t, f.CreatePodsWithGenerateName(ctx, "ns2", tmpl, rc, ref, "hello-"))
		assert.Empty(t, tmpl.GenerateName, "caller's template unchanged")
		require.Len(t, f.Templates, 2)
		assert.Equal(t, "", f.Templates[0].GenerateName)
		assert.Equal(t, "hello-", f.Templates[1].GenerateName)
		assert.Equal(t, []metav1.OwnerReference{*ref, *ref}, f.ControllerRefs)
		assert.Equal(t, []string{"ns1", "ns2"}, f.CreateNamespaces)
		assert.Equal(t, 2, f.CreateCallCount)
		tmpl.Labels["mutated"] = "later"
		assert.NotContains(t, f.Templates[0].Labels, "mutated", "recorded a copy")
	})
	t.Run("create limit fails before recording", func(t *testing.T) {
		f := &FakePodControl{CreateLimit: 2}
		for range 2 {
			require.NoError(t, f.CreatePods(ctx, "ns", podTemplate(), rc, ref))
		}
		err := f.CreatePods(ctx, "ns", podTemplate(), rc, ref)
		assert.ErrorContains(t, err, "limit 2 already reached (create call 3)")
		assert.Len(t, f.Templates, 2)
		assert.Equal(t, 3, f.CreateCallCount)
	})
	t.Run("Err is returned after recording", func(t *testing.T) {
		f := &FakePodControl{Err: errBoom}
		assert.ErrorIs(t, f.CreatePods(ctx, "ns", podTemplate(), rc, ref), errBoom)
		assert.ErrorIs(t, f.DeletePod(ctx, "ns", "p", rc), errBoom)
		assert.ErrorIs(t, f.PatchPod(ctx, "ns", "p", []byte("{}")), errBoom)
		c, d, p := f.Counts()
		assert.Equal(t, [3]int{1, 1, 1}, [3]int{c, d, p})
	})
	t.Run("per-operation errors override Err", func(t *testing.T) {
		errCreate, errDelete, errPatch := errors.New("c"), errors.New("d"), errors.New("p")
		f := &FakePodControl{Err: errBoom, CreateErr: errCreate, DeleteErr: errDelete, PatchErr: errPatch}
		assert.ErrorIs(t, f.CreatePods(ctx, "ns", podTemplate(), rc, ref), errCreate)
		assert.ErrorIs(t, f.DeletePod(ctx, "ns", "p", rc), errDelete)
		assert.ErrorIs(t, f.PatchPod(ctx, "ns", "p", nil), errPatch)
		f2 := &FakePodControl{DeleteErr: errDelete}
		assert.NoError(t, f2.PatchPod(ctx, "ns", "p", nil))
	})
	t.Run("validates like the real one", func(t *testing.T) {
		f := &FakePodControl{}
		assert.ErrorContains(t, f.CreatePods(ctx, "ns", podTemplate(), rc, nil), "controllerRef is nil")
		assert.ErrorIs(t, f.CreatePods(ctx, "ns", &v1.PodTemplateSpec{}, rc, ref), ErrNoLabels)
		assert.Empty(t, f.Templates)
		assert.Equal(t, 2, f.CreateCallCount)
	})
	t.Run("records deletes and patches", func(t *testing.T) {
		f := &FakePodControl{}
		data := []byte(`{"a":1}`)
		require.NoError(t, f.DeletePod(ctx, "ns", "p1", rc))
		require.NoError(t, f.PatchPod(ctx, "ns", "p2", data))
		data[0] = 'X'
		assert.Equal(t, []string{"p1"}, f.DeletePodName)
		assert.Equal(t, []string{"ns"}, f.DeleteNamespaces)
		assert.Equal(t, []string{"ns/p2"}, f.PatchedPods)
		assert.Equal(t, `{"a":1}`, string(f.Patches[0]), "recorded a copy of the patch")
	})
	t.Run("Clear resets records, limit and count, keeps errors", func(t *testing.T) {
		f := &FakePodControl{CreateLimit: 5, Err: errBoom}
		_ = f.CreatePods(ctx, "ns", podTemplate(), rc, ref)
		_ = f.DeletePod(ctx, "ns", "p", rc)
		_ = f.PatchPod(ctx, "ns", "p", nil)
		f.Clear()
		assert.Empty(t, f.Templates)
		assert.Empty(t, f.ControllerRefs)
		assert.Empty(t, f.DeletePodName)
		assert.Empty(t, f.Patches)
		assert.Empty(t, f.PatchedPods)
		assert.Zero(t, f.CreateLimit)
		assert.Zero(t, f.CreateCallCount)
		assert.Equal(t, errBoom, f.Err)
	})
	t.Run("safe for concurrent use", func(t *testing.T) {
		f := &FakePodControl{}
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				_ = f.CreatePods(ctx, "ns", podTemplate(), rc, ref)
				_ = f.DeletePod(ctx, "ns", "p", rc)
				_ = f.PatchPod(ctx, "ns", "p", nil)
				_, _, _ = f.Counts()
			})
		}
		wg.Wait()
		c, d, p := f.Counts()
		assert.Equal(t, [3]int{50, 50, 50}, [3]int{c, d, p})
	})
}

func TestFakePodControlCreatePodWithName(t *testing.T) {
	ctx := context.Background()
	rc := controller("default", "123", false)
	ref := metav1.NewControllerRef(rc, fakeKind)
	f := &FakePodControl{}
	require.NoError(t, f.CreatePodWithName(ctx, "ns", "worker-3", podTemplate(), rc, ref))
	require.Len(t, f.Templates, 1)
	assert.Equal(t, "worker-3", f.Templates[0].Name)
	assert.Empty(t, f.Templates[0].GenerateName)
	assert.ErrorIs(t, f.CreatePodWithName(ctx, "ns", "w", &v1.PodTemplateSpec{}, rc, ref), ErrNoLabels)
}
