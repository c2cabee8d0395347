package claim

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// TestClaimPods is upstream's TestClaimPods (§7.2): after each case the patch
// count is checked, and every patch must name the controller's UID and every
// finalizer.
func TestClaimPods(t *testing.T) {
	allowAdopt := func(context.Context) error { return nil }
	type tcase struct {
		name       string
		ctrl       *v1.ReplicationController
		finalizers []string
		pods       []*v1.Pod
		claimed    []string
		patches    int
	}
	tests := []tcase{
		func() tcase {
			// Upstream's case has no UID; ctrlkit adopts nothing for a
			// controller without one (TestMissingUIDs).
			c := controller("default", "123", false)
			return tcase{name: "Claim pods with correct label", ctrl: c,
				pods:    []*v1.Pod{newPod("pod1", productionLabel, nil), newPod("pod2", testingLabel, nil)},
				claimed: []string{"pod1"}, patches: 1}
		}(),
		func() tcase {
			c := controller("default", "123", true)
			return tcase{name: "Controller marked for deletion can not claim pods", ctrl: c,
				pods:    []*v1.Pod{newPod("pod1", productionLabel, nil), newPod("pod2", productionLabel, nil)},
				claimed: nil}
		}(),
		func() tcase {
			c := controller("default", "123", true)
			return tcase{name: "Controller marked for deletion can not claim new pods", ctrl: c,
				pods:    []*v1.Pod{newPod("pod1", productionLabel, c), newPod("pod2", productionLabel, nil)},
				claimed: []string{"pod1"}}
		}(),
		func() tcase {
			c := controller("default", "123", false)
			c2 := controller("default", "AAAAA", false)
			return tcase{name: "Controller can not claim pods owned by another controller", ctrl: c,
				pods:    []*v1.Pod{newPod("pod1", productionLabel, c), newPod("pod2", productionLabel, c2)},
				claimed: []string{"pod1"}}
		}(),
		func() tcase {
			c := controller("default", "123", false)
			return tcase{name: "Controller releases claimed pods when selector doesn't match", ctrl: c,
				pods:    []*v1.Pod{newPod("pod1", productionLabel, c), newPod("pod2", testingLabel, c)},
				claimed: []string{"pod1"}, patches: 1}
		}(),
		func() tcase {
			c := controller("default", "123", false)
			return tcase{name: "Controller does not claim orphaned pods marked for deletion", ctrl: c,
				pods:    []*v1.Pod{deleting(newPod("pod1", productionLabel, c)), deleting(newPod("pod2", productionLabel, nil))},
				claimed: []string{"pod1"}}
		}(),
		func() tcase {
			c := controller("default", "123", false)
			return tcase{name: "Controller claims or release pods according to selector with finalizers", ctrl: c,
				finalizers: []string{"foo-finalizer", "bar-finalizer"},
				pods:       []*v1.Pod{newPod("pod1", productionLabel, c), newPod("pod2", testingLabel, c), newPod("pod3", productionLabel, nil)},
				claimed:    []string{"pod1", "pod3"}, patches: 2}
		}(),
		func() tcase {
			c := controller("default", "123", false)
			return tcase{name: "Controller does not claim pods of different namespace", ctrl: c,
				pods:    []*v1.Pod{newPod("pod1", productionLabel, nil), withNS(newPod("pod2", productionLabel, nil), "fakens")},
				claimed: []string{"pod1"}, patches: 1}
		}(),
		func() tcase {
			c := controller("", "123", false)
			return tcase{name: "Cluster scoped controller claims pods of specified namespace", ctrl: c,
				pods:    []*v1.Pod{newPod("pod1", productionLabel, nil), withNS(newPod("pod2", productionLabel, nil), "fakens")},
				claimed: []string{"pod1", "pod2"}, patches: 2}
		}(),
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fpc := &fakePodPatcher{}
			m := NewPodControllerRefManager(fpc, tc.ctrl, productionSelector, fakeKind, allowAdopt, tc.finalizers...)
			claimed, err := m.ClaimPods(context.Background(), tc.pods)
			require.NoError(t, err)
			assert.Equal(t, tc.claimed, podNames(claimed))
			if tc.claimed == nil {
				assert.Nil(t, claimed)
			}
			require.Len(t, fpc.Patches, tc.patches)
			for _, p := range fpc.Patches {
				assert.Contains(t, string(p), string(tc.ctrl.UID))
				for _, f := range tc.finalizers {
					assert.Contains(t, string(p), f)
				}
			}

			// ClaimPod, one pod at a time, decides and writes the same.
			one := &fakePodPatcher{}
			m = NewPodControllerRefManager(one, tc.ctrl, productionSelector, fakeKind, allowAdopt, tc.finalizers...)
			var names []string
			for _, pod := range tc.pods {
				owned, err := m.ClaimPod(context.Background(), pod)
				require.NoError(t, err)
				if owned {
					names = append(names, pod.Name)
				}
			}
			assert.Equal(t, tc.claimed, names, "ClaimPod")
			assert.Equal(t, fpc.Patches, one.Patches, "ClaimPod patches")
			assert.Equal(t, fpc.PatchedPods, one.PatchedPods, "ClaimPod patched pods")
		})
	}
}

func podNames(pods []*v1.Pod) []string {
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	return names
}

func TestClaimPodsFiltersOrderAndErrors(t *testing.T) {
	ctx := context.Background()
	c := controller("default", "123", false)
	t.Run("filters run only on selector matches, all must pass", func(t *testing.T) {
		var seen []string
		notB := func(p *v1.Pod) bool { seen = append(seen, p.Name); return p.Name != "b" }
		always := func(*v1.Pod) bool { return true }
		fpc := &fakePodPatcher{}
		m := NewPodControllerRefManager(fpc, c, productionSelector, fakeKind, nil)
		claimed, err := m.ClaimPods(ctx, []*v1.Pod{
			newPod("a", productionLabel, c), newPod("b", productionLabel, c), newPod("x", testingLabel, nil), newPod("d", productionLabel, nil),
		}, always, notB)
		require.NoError(t, err)
		assert.Equal(t, []string{"a", "d"}, podNames(claimed))
		assert.Equal(t, []string{"a", "b", "d"}, seen, "filter never sees non-matching pods")
		assert.Equal(t, []string{"default/b", "default/d"}, fpc.PatchedPods, "b released, d adopted")
	})
	t.Run("errors aggregated and processing continues", func(t *testing.T) {
		errBoom := errors.New("boom")
		fpc := &fakePodPatcher{PatchErr: errBoom}
		m := NewPodControllerRefManager(fpc, c, productionSelector, fakeKind, nil)
		claimed, err := m.ClaimPods(ctx, []*v1.Pod{
			newPod("a", productionLabel, nil), newPod("b", productionLabel, c), newPod("c", productionLabel, nil),
		})
		require.Error(t, err)
		var agg utilerrors.Aggregate
		require.ErrorAs(t, err, &agg)
		assert.Len(t, agg.Errors(), 2)
		assert.ErrorIs(t, err, errBoom)
		assert.Equal(t, []string{"b"}, podNames(claimed))
		assert.Len(t, fpc.Patches, 2)
	})
	t.Run("adopt NotFound and release Invalid are not errors", func(t *testing.T) {
		fpc := &fakePodPatcher{PatchErr: notFound("a")}
		m := NewPodControllerRefManager(fpc, c, productionSelector, fakeKind, nil)
		claimed, err := m.ClaimPods(ctx, []*v1.Pod{newPod("a", productionLabel, nil), newPod("b", testingLabel, c)})
		require.NoError(t, err)
		assert.Empty(t, claimed)
		fpc.PatchErr = invalid("b")
		_, err = m.ClaimPods(ctx, []*v1.Pod{newPod("b", testingLabel, c)})
		require.NoError(t, err)
	})
	t.Run("nil selector matches nothing", func(t *testing.T) {
		fpc := &fakePodPatcher{}
		m := NewPodControllerRefManager(fpc, c, nil, fakeKind, nil)
		claimed, err := m.ClaimPods(ctx, []*v1.Pod{newPod("a", productionLabel, nil), newPod("b", productionLabel, c)})
		require.NoError(t, err)
		assert.Empty(t, claimed)
		// Like labels.Nothing(): the orphan is left alone, the owned pod released.
		assert.Equal(t, []string{"default/b"}, fpc.PatchedPods)
	})
	t.Run("no pods", func(t *testing.T) {
		m := NewPodControllerRefManager(&fakePodPatcher{}, c, productionSelector, fakeKind, nil)
		claimed, err := m.ClaimPods(ctx, nil)
		assert.NoError(t, err)
		assert.Nil(t, claimed)
	})
}

func TestAdoptPod(t *testing.T) {
	ctx := context.Background()
	c := controller("default", "123", false)
	kind := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
	tests := []struct {
		name       string
		finalizers []string
		canAdopt   func(context.Context) error
		wantBody   string
		wantErr    string
	}{
		{
			name:     "owner reference and uid precondition",
			wantBody: `{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rc","uid":"123","controller":true,"blockOwnerDeletion":true}],"uid":"uid-p"}}`,
		},
		{
			name:       "with finalizers",
			finalizers: []string{"f1", "f2"},
			wantBody:   `{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rc","uid":"123","controller":true,"blockOwnerDeletion":true}],"uid":"uid-p","finalizers":["f1","f2"]}}`,
		},
		{
			name:     "can adopt refuses",
			canAdopt: func(context.Context) error { return errors.New("rc is being deleted") },
			wantErr:  "can't adopt Pod default/p (uid-p): rc is being deleted",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fpc := &fakePodPatcher{}
			m := NewPodControllerRefManager(fpc, c, productionSelector, kind, tc.canAdopt, tc.finalizers...)
			err := m.AdoptPod(ctx, newPod("p", productionLabel, nil))
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				assert.Empty(t, fpc.Patches, "no patch when CanAdopt refuses")
				return
			}
			require.NoError(t, err)
			require.Len(t, fpc.Patches, 1)
			assert.Equal(t, tc.wantBody, string(fpc.Patches[0]))
			assert.Equal(t, []string{"default/p"}, fpc.PatchedPods)
		})
	}
}

func TestReleasePod(t *testing.T) {
	ctx := context.Background()
	c := controller("default", "123", false)
	errBoom := errors.New("boom")
	tests := []struct {
		name       string
		finalizers []string
		patchErr   error
		wantErr    error
		wantBody   string
	}{
		{name: "patch", wantBody: `{"metadata":{"uid":"uid-p","ownerReferences":[{"$patch":"delete","uid":"123"}]}}`},
		{name: "patch with finalizers", finalizers: []string{"f1"}, wantBody: `{"metadata":{"uid":"uid-p","ownerReferences":[{"$patch":"delete","uid":"123"}],"$deleteFromPrimitiveList/finalizers":["f1"]}}`},
		{name: "NotFound ignored", patchErr: notFound("p")},
		{name: "Invalid ignored", patchErr: invalid("p")},
		{name: "other error returned", patchErr: errBoom, wantErr: errBoom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fpc := &fakePodPatcher{PatchErr: tc.patchErr}
			m := NewPodControllerRefManager(fpc, c, productionSelector, fakeKind, nil, tc.finalizers...)
			err := m.ReleasePod(ctx, newPod("p", testingLabel, c))
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
			} else {
				assert.NoError(t, err)
			}
			require.Len(t, fpc.Patches, 1)
			if tc.wantBody != "" {
				assert.Equal(t, tc.wantBody, string(fpc.Patches[0]))
			}
			var decoded map[string]any
			require.NoError(t, json.Unmarshal(fpc.Patches[0], &decoded), "valid JSON")
		})
	}
}

func TestPodManagerExposesBase(t *testing.T) {
	c := controller("default", "123", false)
	m := NewPodControllerRefManager(&fakePodPatcher{}, c, labels.Everything(), fakeKind, nil)
	// Upstream callers read these promoted fields.
	assert.Equal(t, metav1.Object(c), m.Controller)
	assert.NotNil(t, m.Selector)
	assert.NoError(t, m.CanAdopt(context.Background()))
}

// Objects and controllers without UIDs never panic. Objects owned by the
// UID-less controller are compared and released like any other, but it adopts
// nothing: an owner reference with uid "" names no object, so the orphan is
// refused with ErrControllerHasNoUID and no patch (upstream sends one).
func TestMissingUIDs(t *testing.T) {
	ctx := context.Background()
	noUID := controller("default", "", false)
	orphan := newPod("orphan", productionLabel, nil)
	orphan.UID = ""
	owned := newPod("owned", testingLabel, noUID) // controllerRef with empty UID
	owned.UID = ""
	stranger := newPod("stranger", productionLabel, controller("default", "x", false))
	fpc := &fakePodPatcher{}
	m := NewPodControllerRefManager(fpc, noUID, productionSelector, fakeKind, nil)
	claimed, err := m.ClaimPods(ctx, []*v1.Pod{orphan, owned, stranger})
	require.ErrorIs(t, err, ErrControllerHasNoUID)
	assert.ErrorContains(t, err, "can't adopt default/orphan")
	assert.Empty(t, claimed)
	require.Len(t, fpc.Patches, 1, "the release only")
	assert.Equal(t, `{"metadata":{"uid":"","ownerReferences":[{"$patch":"delete","uid":""}]}}`, string(fpc.Patches[0]))

	err = m.AdoptPod(ctx, newPod("direct", productionLabel, nil))
	require.ErrorIs(t, err, ErrControllerHasNoUID)
	assert.EqualError(t, err, "can't adopt Pod default/direct: the controller has no UID")
	assert.Len(t, fpc.Patches, 1, "no adoption patch")

	var base BaseControllerRefManager
	base.Controller, base.Selector = noUID, productionSelector
	adopted := false
	ok, err := base.ClaimObject(ctx, newPod("orphan2", productionLabel, nil),
		func(o metav1.Object) bool { return productionSelector.Matches(labels.Set(o.GetLabels())) },
		func(context.Context, metav1.Object) error { adopted = true; return nil },
		func(context.Context, metav1.Object) error { return nil })
	assert.False(t, ok)
	assert.ErrorIs(t, err, ErrControllerHasNoUID)
	assert.False(t, adopted, "ClaimObject must not call adopt for a controller without a UID")
}

// Nil pods in the list are bad data from the caller's cache: they are
// skipped, never dereferenced. Adopt and Release refuse a nil object with an
// error and no patch. The previous code panicked on the first nil entry.
func TestClaimSkipsNilObjects(t *testing.T) {
	ctx := context.Background()
	c := controller("default", "123", false)
	fpc := &fakePodPatcher{}
	m := NewPodControllerRefManager(fpc, c, productionSelector, fakeKind, nil)
	orphan := newPod("orphan", productionLabel, nil)
	mine := newPod("mine", productionLabel, c)
	var claimed []*v1.Pod
	var err error
	require.NotPanics(t, func() { claimed, err = m.ClaimPods(ctx, []*v1.Pod{nil, orphan, nil, mine, nil}) })
	require.NoError(t, err)
	assert.Equal(t, []string{"orphan", "mine"}, podNames(claimed))
	assert.Equal(t, []string{"default/orphan"}, fpc.PatchedPods)

	var ok bool
	require.NotPanics(t, func() { ok, err = m.ClaimPod(ctx, nil) })
	assert.False(t, ok)
	assert.NoError(t, err)
	require.NotPanics(t, func() { ok, err = m.ClaimObject(ctx, (*v1.Pod)(nil), nil, nil, nil) })
	assert.False(t, ok)
	assert.NoError(t, err)
	require.NotPanics(t, func() { err = m.AdoptPod(ctx, nil) })
	assert.Error(t, err)
	require.NotPanics(t, func() { err = m.ReleasePod(ctx, nil) })
	assert.Error(t, err)
	assert.Len(t, fpc.Patches, 1, "no patch for a nil pod")

	// The generic manager, over unstructured objects held as an interface.
	gm := NewObjectControllerRefManager[metav1.Object](PatcherFunc(func(context.Context, string, string, []byte) error { return nil }),
		c, productionSelector, fakeKind, nil)
	require.NotPanics(t, func() {
		_, err = gm.Claim(ctx, []metav1.Object{nil, (*v1.Pod)(nil), newPod("x", productionLabel, nil)})
	})
	assert.NoError(t, err)
}
