package history

import (
	"context"
	"errors"
	"testing"

	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

type realFixture struct {
	client   *fake.Clientset
	informer informers.SharedInformerFactory
	history  Interface
}

// newRealFixture returns NewHistory over a fake clientset whose objects are
// also in the lister's store, as a synced informer would have them.
func newRealFixture(t *testing.T, objs []*appsv1.ControllerRevision, opts ...Option) *realFixture {
	t.Helper()
	var rt []runtime.Object
	for _, o := range objs {
		rt = append(rt, o)
	}
	client := fake.NewClientset(rt...)
	f := informers.NewSharedInformerFactory(client, 0)
	inf := f.Apps().V1().ControllerRevisions()
	require.NoError(t, AddControllerRevisionControllerIndexer(inf.Informer()))
	require.NoError(t, AddControllerRevisionControllerIndexer(inf.Informer()), "adding the index twice is harmless")
	for _, o := range objs {
		require.NoError(t, inf.Informer().GetIndexer().Add(o))
	}
	return &realFixture{client: client, informer: f, history: NewHistory(client, inf.Lister(), opts...)}
}

func storedRevision(name string, raw string, owner *appsv1.StatefulSet) *appsv1.ControllerRevision {
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("cr-" + name), Labels: map[string]string{"app": "db"}},
		Data:       rawData(raw),
	}
	if owner != nil {
		cr.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, setKind)}
	}
	return cr
}

func TestCreateControllerRevision(t *testing.T) {
	ctx := context.Background()
	db := parentSet("db")
	rev, err := NewControllerRevision(db, setKind, map[string]string{"app": "db"}, rawData(`{"v":2}`), 2, nil)
	require.NoError(t, err)
	name := func(cc int32) string { return ControllerRevisionName("db", HashControllerRevision(rev, &cc)) }

	for _, impl := range []string{"real", "fake"} {
		t.Run(impl, func(t *testing.T) {
			mk := func(objs ...*appsv1.ControllerRevision) Interface {
				if impl == "real" {
					return newRealFixture(t, objs).history
				}
				return newFakeFixture(t, objs...)
			}

			cc := int32(0)
			created, err := mk().CreateControllerRevision(ctx, db, rev, &cc)
			require.NoError(t, err)
			assert.Equal(t, name(0), created.Name)
			assert.Equal(t, "ns", created.Namespace)
			assert.Equal(t, int32(0), cc)

			// The first name is taken by other data: the count goes up.
			cc = 0
			taken := storedRevision(name(0), `{"v":1}`, db)
			created, err = mk(taken).CreateControllerRevision(ctx, db, rev, &cc)
			require.NoError(t, err)
			assert.Equal(t, int32(1), cc)
			assert.Equal(t, name(1), created.Name)

			// Taken by the same data: that revision is the answer.
			cc = 0
			same := storedRevision(name(0), `{"v":2}`, db)
			created, err = mk(same).CreateControllerRevision(ctx, db, rev, &cc)
			require.NoError(t, err)
			assert.Equal(t, same.UID, created.UID)
			assert.Equal(t, int32(0), cc)

			_, err = mk().CreateControllerRevision(ctx, db, rev, nil)
			assert.Error(t, err, "a nil collision count is an error")
			assert.Equal(t, `{"v":2}`, string(rev.Data.Raw), "the input revision is not modified")
		})
	}
}

func TestCreateGivesUpAfterMaxAttempts(t *testing.T) {
	f := newRealFixture(t, nil)
	creates := 0
	f.client.PrependReactor("create", "controllerrevisions", func(k8stesting.Action) (bool, runtime.Object, error) {
		creates++
		return true, nil, apierrors.NewAlreadyExists(revisionResource, "x")
	})
	f.client.PrependReactor("get", "controllerrevisions", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, storedRevision("x", `{"other":true}`, nil), nil
	})
	cc := int32(0)
	rev, _ := NewControllerRevision(parentSet("db"), setKind, nil, rawData(`{}`), 1, nil)
	_, err := f.history.CreateControllerRevision(context.Background(), parentSet("db"), rev, &cc)
	require.ErrorIs(t, err, ErrTooManyCollisions)
	assert.Equal(t, MaxCreateAttempts, creates)
	assert.Equal(t, int32(MaxCreateAttempts), cc)
}

func TestCreateOtherErrors(t *testing.T) {
	f := newRealFixture(t, nil)
	boom := errors.New("boom")
	f.client.PrependReactor("create", "controllerrevisions", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewAlreadyExists(revisionResource, "x")
	})
	f.client.PrependReactor("get", "controllerrevisions", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, boom
	})
	cc := int32(0)
	rev, _ := NewControllerRevision(parentSet("db"), setKind, nil, rawData(`{}`), 1, nil)
	_, err := f.history.CreateControllerRevision(context.Background(), parentSet("db"), rev, &cc)
	assert.ErrorIs(t, err, boom)
}

func TestListControllerRevisions(t *testing.T) {
	db, other := parentSet("db"), parentSet("other")
	mine := storedRevision("mine", `{}`, db)
	orphan := storedRevision("orphan", `{}`, nil)
	theirs := storedRevision("theirs", `{}`, other)
	unlabelled := storedRevision("unlabelled", `{}`, db)
	unlabelled.Labels = nil
	elsewhere := storedRevision("elsewhere", `{}`, db)
	elsewhere.Namespace = "other-ns"
	objs := []*appsv1.ControllerRevision{mine, orphan, theirs, unlabelled, elsewhere}
	sel := labels.SelectorFromSet(labels.Set{"app": "db"})

	impls := map[string]func() Interface{
		"real with index": func() Interface {
			f := newRealFixture(t, objs)
			inf := f.informer.Apps().V1().ControllerRevisions().Informer()
			return NewHistory(f.client, f.informer.Apps().V1().ControllerRevisions().Lister(), WithIndexer(inf.GetIndexer()))
		},
		"real with lister": func() Interface { return newRealFixture(t, objs).history },
		"fake":             func() Interface { return newFakeFixture(t, objs...) },
	}
	for name, mk := range impls {
		t.Run(name, func(t *testing.T) {
			h := mk()
			got, err := h.ListControllerRevisions(context.Background(), db, setKind, sel)
			require.NoError(t, err)
			assert.ElementsMatch(t, []*appsv1.ControllerRevision{mine, orphan}, got)
			got, err = h.ListControllerRevisions(context.Background(), db, setKind, nil)
			assert.NoError(t, err)
			assert.Empty(t, got, "a nil selector matches nothing")
		})
	}
}

func TestUpdateControllerRevision(t *testing.T) {
	ctx := context.Background()
	stored := storedRevision("r", `{}`, nil)
	stored.Revision = 1

	f := newRealFixture(t, []*appsv1.ControllerRevision{stored})
	conflicts := 1
	f.client.PrependReactor("update", "controllerrevisions", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts > 0 {
			conflicts--
			return true, nil, apierrors.NewConflict(revisionResource, "r", errors.New("stale"))
		}
		return false, nil, nil
	})
	got, err := f.history.UpdateControllerRevision(ctx, stored, 5)
	require.NoError(t, err)
	assert.Equal(t, int64(5), got.Revision)
	live, err := f.client.AppsV1().ControllerRevisions("ns").Get(ctx, "r", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int64(5), live.Revision)
	assert.Equal(t, int64(1), stored.Revision, "the input is not modified")

	got, err = f.history.UpdateControllerRevision(ctx, live, 5)
	require.NoError(t, err, "already at the revision: no write")
	assert.Equal(t, int64(5), got.Revision)

	boom := errors.New("boom")
	f.client.PrependReactor("update", "controllerrevisions", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, boom
	})
	_, err = f.history.UpdateControllerRevision(ctx, live, 6)
	assert.ErrorIs(t, err, boom)

	always := newRealFixture(t, []*appsv1.ControllerRevision{stored})
	always.client.PrependReactor("update", "controllerrevisions", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(revisionResource, "r", errors.New("stale"))
	})
	_, err = always.history.UpdateControllerRevision(ctx, stored, 7)
	assert.True(t, apierrors.IsConflict(err), "after the retries the last conflict is returned: %v", err)

	// A conflict on a revision the cache does not hold must not read as
	// success on the next attempt, which would find the copy already at
	// the revision it failed to write.
	uncached := newRealFixture(t, nil)
	uncached.client.PrependReactor("update", "controllerrevisions", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(revisionResource, "r", errors.New("stale"))
	})
	_, err = uncached.history.UpdateControllerRevision(ctx, stored, 8)
	assert.True(t, apierrors.IsConflict(err), "a conflict with nothing cached is an error, not a success: %v", err)

	fk := newFakeFixture(t, stored)
	got, err = fk.UpdateControllerRevision(ctx, stored, 3)
	require.NoError(t, err)
	assert.Equal(t, int64(3), got.Revision)
}

func TestDeleteControllerRevision(t *testing.T) {
	ctx := context.Background()
	stored := storedRevision("r", `{}`, nil)
	for name, h := range map[string]Interface{"real": newRealFixture(t, []*appsv1.ControllerRevision{stored}).history, "fake": newFakeFixture(t, stored)} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, h.DeleteControllerRevision(ctx, stored))
			assert.True(t, apierrors.IsNotFound(h.DeleteControllerRevision(ctx, stored)))
		})
	}
}

func TestAdoptAndRelease(t *testing.T) {
	ctx := context.Background()
	db := parentSet("db")
	orphan := storedRevision("orphan", `{}`, nil)
	owned := storedRevision("owned", `{}`, parentSet("other"))

	f := newRealFixture(t, []*appsv1.ControllerRevision{orphan, owned})
	adopted, err := f.history.AdoptControllerRevision(ctx, db, setKind, orphan)
	require.NoError(t, err)
	assert.True(t, metav1.IsControlledBy(adopted, db))
	want, err := claim.GenerateAdoptOwnerRefStrategicMergeBytes(db, setKind, orphan.UID)
	require.NoError(t, err)
	patch := lastPatch(t, f.client)
	assert.Equal(t, types.StrategicMergePatchType, patch.GetPatchType())
	assert.JSONEq(t, string(want), string(patch.GetPatch()))

	_, err = f.history.AdoptControllerRevision(ctx, db, setKind, owned)
	assert.Error(t, err, "a revision with another controller is not adopted")

	released, err := f.history.ReleaseControllerRevision(ctx, db, adopted)
	require.NoError(t, err)
	assert.Nil(t, metav1.GetControllerOf(released))
	want, err = claim.GenerateDeleteOwnerRefStrategicMergeBytes(orphan.UID, []types.UID{db.UID})
	require.NoError(t, err)
	assert.Equal(t, string(want), string(lastPatch(t, f.client).GetPatch()))

	for _, e := range []error{apierrors.NewNotFound(revisionResource, "x"), apierrors.NewInvalid(setKind.GroupKind(), "x", field.ErrorList{})} {
		f.client.PrependReactor("patch", "controllerrevisions", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, e
		})
		got, err := f.history.ReleaseControllerRevision(ctx, db, adopted)
		assert.NoError(t, err)
		assert.Nil(t, got)
	}
	boom := errors.New("boom")
	f.client.PrependReactor("patch", "controllerrevisions", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, boom
	})
	_, err = f.history.ReleaseControllerRevision(ctx, db, adopted)
	assert.ErrorIs(t, err, boom)
	_, err = f.history.AdoptControllerRevision(ctx, db, setKind, orphan)
	assert.ErrorIs(t, err, boom)

	fk := newFakeFixture(t, orphan, owned)
	adopted, err = fk.AdoptControllerRevision(ctx, db, setKind, orphan)
	require.NoError(t, err)
	assert.True(t, metav1.IsControlledBy(adopted, db))
	_, err = fk.AdoptControllerRevision(ctx, db, setKind, owned)
	assert.Error(t, err)
	_, err = fk.AdoptControllerRevision(ctx, db, setKind, storedRevision("missing", `{}`, nil))
	assert.True(t, apierrors.IsNotFound(err))
	released, err = fk.ReleaseControllerRevision(ctx, db, adopted)
	require.NoError(t, err)
	assert.Empty(t, released.OwnerReferences)
	released, err = fk.ReleaseControllerRevision(ctx, db, storedRevision("missing", `{}`, db))
	assert.NoError(t, err)
	assert.Nil(t, released)
}

func lastPatch(t *testing.T, client *fake.Clientset) k8stesting.PatchAction {
	t.Helper()
	actions := client.Actions()
	for i := len(actions) - 1; i >= 0; i-- {
		if p, ok := actions[i].(k8stesting.PatchAction); ok {
			return p
		}
	}
	t.Fatal("no patch sent")
	return nil
}

func newFakeFixture(t *testing.T, objs ...*appsv1.ControllerRevision) Interface {
	t.Helper()
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	inf := f.Apps().V1().ControllerRevisions()
	for _, o := range objs {
		require.NoError(t, inf.Informer().GetIndexer().Add(o.DeepCopy()))
	}
	return NewFakeHistory(inf)
}

func TestConstructorsPanicOnProgrammerErrors(t *testing.T) {
	assert.PanicsWithValue(t, "history: NewHistory: nil client or lister", func() { NewHistory(nil, nil) })
	assert.PanicsWithValue(t, "history: NewFakeHistory: nil informer", func() { NewFakeHistory(nil) })
	assert.PanicsWithValue(t, "history: WithRequestTimeout: the timeout must be positive", func() { WithRequestTimeout(0) })
	assert.NotPanics(t, func() { newConfig([]Option{nil, WithIndexer(nil)}) })
}
