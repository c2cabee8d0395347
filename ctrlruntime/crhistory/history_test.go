package crhistory_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/crhistory"
	"github.com/ctrlkit/ctrlkit/history"
)

var setKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")

func parent(uid string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: k8stypes.UID(uid)}}
}

func newRevision(t *testing.T, p metav1.Object, data string, number int64) *appsv1.ControllerRevision {
	t.Helper()
	rev, err := history.NewControllerRevision(p, setKind, map[string]string{"app": "web"}, runtime.RawExtension{Raw: []byte(data)}, number, ptr.To[int32](0))
	require.NoError(t, err)
	return rev
}

func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	return s
}

// deadlines fails the test when a write reaches the client without one.
func deadlines(t *testing.T) interceptor.Funcs {
	check := func(ctx context.Context, what string) {
		if _, ok := ctx.Deadline(); !ok {
			t.Errorf("%s without a deadline", what)
		}
	}
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			check(ctx, "create")
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			check(ctx, "update")
			return c.Update(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			check(ctx, "delete")
			return c.Delete(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			check(ctx, "patch")
			return c.Patch(ctx, obj, patch, opts...)
		},
	}
}

func newClient(t *testing.T, objs ...client.Object) client.WithWatch {
	return fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).WithInterceptorFuncs(deadlines(t)).Build()
}

var selector = labels.SelectorFromSet(labels.Set{"app": "web"})

// A created revision is listed back; the same data again is the same
// revision and no collision.
func TestCreateAndList(t *testing.T) {
	ctx := context.Background()
	p := parent("p-uid")
	h := crhistory.New(newClient(t), nil)
	var count int32
	created, err := h.CreateControllerRevision(ctx, p, newRevision(t, p, `{"v":1}`, 1), &count)
	require.NoError(t, err)
	assert.Equal(t, "ns", created.Namespace)
	assert.Equal(t, history.ControllerRevisionName("web", history.HashControllerRevision(newRevision(t, p, `{"v":1}`, 1), ptr.To[int32](0))), created.Name)
	again, err := h.CreateControllerRevision(ctx, p, newRevision(t, p, `{"v":1}`, 2), &count)
	require.NoError(t, err)
	assert.Equal(t, created.Name, again.Name)
	assert.Equal(t, int64(1), again.Revision, "the stored revision, not the new one")
	assert.Zero(t, count)

	listed, err := h.ListControllerRevisions(ctx, p, setKind, selector)
	require.NoError(t, err)
	require.Len(t, listed, 1)
	assert.Equal(t, created.Name, listed[0].Name)
	none, err := h.ListControllerRevisions(ctx, p, setKind, nil)
	require.NoError(t, err)
	assert.Empty(t, none)
}

// List keeps the parent's revisions and orphans, not another owner's nor
// those the selector leaves out.
func TestListFilters(t *testing.T) {
	p, other := parent("p-uid"), parent("other-uid")
	mine, theirs, orphan, unlabelled := newRevision(t, p, `1`, 1), newRevision(t, other, `2`, 1), newRevision(t, p, `3`, 1), newRevision(t, p, `4`, 1)
	mine.Name, theirs.Name, orphan.Name, unlabelled.Name = "mine", "theirs", "orphan", "unlabelled"
	orphan.OwnerReferences = nil
	unlabelled.Labels = nil
	for _, r := range []*appsv1.ControllerRevision{mine, theirs, orphan, unlabelled} {
		r.Namespace = "ns"
	}
	h := crhistory.New(newClient(t, mine, theirs, orphan, unlabelled), nil)
	listed, err := h.ListControllerRevisions(context.Background(), p, setKind, selector)
	require.NoError(t, err)
	var names []string
	for _, r := range listed {
		names = append(names, r.Name)
	}
	assert.ElementsMatch(t, []string{"mine", "orphan"}, names)
}

// A name held by other data advances the collision count and the revision
// is created under the next name.
func TestCreateCollision(t *testing.T) {
	ctx := context.Background()
	p := parent("p-uid")
	wanted := newRevision(t, p, `{"v":2}`, 2)
	squatter := newRevision(t, p, `{"v":"other"}`, 1)
	squatter.Namespace = "ns"
	squatter.Name = history.ControllerRevisionName("web", history.HashControllerRevision(wanted, ptr.To[int32](0)))
	h := crhistory.New(newClient(t, squatter), nil)
	var count int32
	created, err := h.CreateControllerRevision(ctx, p, wanted, &count)
	require.NoError(t, err)
	assert.Equal(t, int32(1), count)
	assert.Equal(t, history.ControllerRevisionName("web", history.HashControllerRevision(wanted, ptr.To[int32](1))), created.Name)
	assert.Equal(t, `{"v":2}`, string(created.Data.Raw))

	_, err = h.CreateControllerRevision(ctx, p, wanted, nil)
	assert.Error(t, err, "a nil count is refused")
}

// A taken name the cache does not show yet is read through the live
// reader: it is the revision an earlier sync created.
func TestCreateReadsTakenNameLive(t *testing.T) {
	p := parent("p-uid")
	rev := newRevision(t, p, `{"v":1}`, 1)
	stored := rev.DeepCopy()
	stored.Namespace = "ns"
	api := newClient(t, stored)
	emptyCache := newClient(t)
	var count int32
	got, err := crhistory.New(api, emptyCache, crhistory.WithLiveReader(api)).CreateControllerRevision(context.Background(), p, rev, &count)
	require.NoError(t, err)
	assert.Equal(t, rev.Name, got.Name)
	assert.Zero(t, count)

	_, err = crhistory.New(api, emptyCache).CreateControllerRevision(context.Background(), p, rev, &count)
	assert.True(t, apierrors.IsNotFound(err), "through the lagging cache the taken name is not found: %v", err)
}

// Update renumbers a revision, retrying a conflict with the cache's copy.
func TestUpdateRetriesConflicts(t *testing.T) {
	p := parent("p-uid")
	rev := newRevision(t, p, `{"v":1}`, 1)
	rev.Namespace = "ns"
	conflicts := 2
	base := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(rev).WithInterceptorFuncs(interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if _, ok := ctx.Deadline(); !ok {
				t.Error("update without a deadline")
			}
			if conflicts > 0 {
				conflicts--
				return apierrors.NewConflict(appsv1.Resource("controllerrevisions"), obj.GetName(), nil)
			}
			return c.Update(ctx, obj, opts...)
		},
	}).Build()
	h := crhistory.New(base, nil)
	cached := &appsv1.ControllerRevision{}
	require.NoError(t, base.Get(context.Background(), client.ObjectKeyFromObject(rev), cached))
	updated, err := h.UpdateControllerRevision(context.Background(), cached, 5)
	require.NoError(t, err)
	assert.Equal(t, int64(5), updated.Revision)
	assert.Zero(t, conflicts)
	stored := &appsv1.ControllerRevision{}
	require.NoError(t, base.Get(context.Background(), client.ObjectKeyFromObject(rev), stored))
	assert.Equal(t, int64(5), stored.Revision)
	assert.Equal(t, int64(1), cached.Revision, "the argument is not mutated")
}

// Delete removes a revision; a missing one is a NotFound error.
func TestDelete(t *testing.T) {
	p := parent("p-uid")
	rev := newRevision(t, p, `{"v":1}`, 1)
	rev.Namespace = "ns"
	c := newClient(t, rev)
	h := crhistory.New(c, nil)
	require.NoError(t, h.DeleteControllerRevision(context.Background(), rev))
	err := c.Get(context.Background(), client.ObjectKeyFromObject(rev), &appsv1.ControllerRevision{})
	assert.True(t, apierrors.IsNotFound(err))
	err = h.DeleteControllerRevision(context.Background(), rev)
	assert.True(t, apierrors.IsNotFound(err), "wrapped, still a NotFound: %v", err)
}

// Adopt makes the parent the orphan's controller; release takes it back.
func TestAdoptAndRelease(t *testing.T) {
	ctx := context.Background()
	p := parent("p-uid")
	rev := newRevision(t, p, `{"v":1}`, 1)
	rev.Namespace, rev.UID, rev.OwnerReferences = "ns", "rev-uid", nil
	h := crhistory.New(newClient(t, rev), nil)

	adopted, err := h.AdoptControllerRevision(ctx, p, setKind, rev)
	require.NoError(t, err)
	ref := metav1.GetControllerOf(adopted)
	require.NotNil(t, ref)
	assert.Equal(t, p.UID, ref.UID)
	assert.Equal(t, "StatefulSet", ref.Kind)
	_, err = h.AdoptControllerRevision(ctx, parent("other"), setKind, adopted)
	assert.Error(t, err, "a controlled revision is not adopted")

	released, err := h.ReleaseControllerRevision(ctx, p, adopted)
	require.NoError(t, err)
	require.NotNil(t, released)
	assert.Nil(t, metav1.GetControllerOf(released))

	gone := rev.DeepCopy()
	gone.Name = "gone"
	released, err = h.ReleaseControllerRevision(ctx, p, gone)
	assert.NoError(t, err)
	assert.Nil(t, released)
}

// An error that is not AlreadyExists ends the creation, wrapped.
func TestCreateFails(t *testing.T) {
	p := parent("p-uid")
	boom := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "controllerrevisions"}, "x", nil)
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return boom },
	}).Build()
	var count int32
	_, err := crhistory.New(c, nil).CreateControllerRevision(context.Background(), p, newRevision(t, p, `1`, 1), &count)
	assert.True(t, apierrors.IsForbidden(err), "%v", err)
}
