package podsetcr

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/examples/podgroup"
	"github.com/ctrlkit/ctrlkit/podset"
)

// statusWrites counts status-subresource writes and can fail the first
// ones with the given errors.
type statusWrites struct {
	n    int
	fail []error
}

func (w *statusWrites) funcs() interceptor.Funcs {
	return interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		w.n++
		if len(w.fail) > 0 {
			err := w.fail[0]
			w.fail = w.fail[1:]
			return err
		}
		return c.SubResource(sub).Update(ctx, obj, opts...)
	}}
}

func newPodGroupKind(t *testing.T, w *statusWrites, objs ...client.Object) (*Kind[*unstructured.Unstructured], client.Client) {
	t.Helper()
	s := newScheme(t)
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithStatusSubresource(newGroup("", 0)).WithInterceptorFuncs(w.funcs()).Build()
	k, err := NewKind[*unstructured.Unstructured](podgroup.Kind{}, c, c, c, s)
	require.NoError(t, err)
	return k, c
}

func TestKindGetReadsTheCacheAndGivesNotFound(t *testing.T) {
	k, _ := newPodGroupKind(t, &statusWrites{}, newGroup("web", 2))
	got, err := k.Get("ns", "web")
	require.NoError(t, err)
	assert.Equal(t, "web", got.GetName())
	assert.EqualValues(t, 2, k.Replicas(got), "the describer reads the spec")
	assert.Equal(t, podGroupGVK, got.GroupVersionKind())

	_, err = k.Get("ns", "gone")
	assert.True(t, apierrors.IsNotFound(err), "a missing owner is NotFound, as podset needs: %v", err)
	_, err = k.GetUncached(context.Background(), "ns", "gone")
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
}

func TestKindUpdateStatusWritesOnlyChanges(t *testing.T) {
	w := &statusWrites{}
	k, c := newPodGroupKind(t, w, newGroup("web", 2))
	ctx := context.Background()
	cached, err := k.Get("ns", "web")
	require.NoError(t, err)

	got, err := k.UpdateStatus(ctx, cached, podset.StatusInput{})
	require.NoError(t, err)
	assert.Nil(t, cached.Object["status"], "the cached object is not modified")
	assert.Equal(t, 1, w.n)
	stored := newGroup("", 0)
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, stored))
	assert.Equal(t, got.Object["status"], stored.Object["status"])
	observed, _, _ := unstructured.NestedInt64(stored.Object, "status", "observedGeneration")
	assert.EqualValues(t, 1, observed)

	again, err := k.UpdateStatus(ctx, stored, podset.StatusInput{})
	require.NoError(t, err)
	assert.Equal(t, 1, w.n, "an unchanged status is not written again")
	assert.Same(t, stored, again)
}

func TestKindUpdateStatusRetriesOnce(t *testing.T) {
	conflict := apierrors.NewConflict(podgroup.Resource.GroupResource(), "web", errors.New("changed"))
	w := &statusWrites{fail: []error{conflict}}
	k, _ := newPodGroupKind(t, w, newGroup("web", 2))
	cached, err := k.Get("ns", "web")
	require.NoError(t, err)
	_, err = k.UpdateStatus(context.Background(), cached, podset.StatusInput{})
	require.NoError(t, err, "the second attempt, on a fresh read, succeeds")
	assert.Equal(t, 2, w.n)

	// One more pod than the stored status says, so every attempt writes.
	more := podset.StatusInput{Active: []*corev1.Pod{{}}}
	w.fail = []error{conflict, conflict}
	_, err = k.UpdateStatus(context.Background(), cached, more)
	require.Error(t, err)
	assert.True(t, apierrors.IsConflict(err), "the error wraps the cause: %v", err)
	assert.Equal(t, 4, w.n, "one retry, not more")

	// As upstream, any failed write is retried once, not only a conflict.
	forbidden := apierrors.NewForbidden(podgroup.Resource.GroupResource(), "web", errors.New("no"))
	w.fail = []error{forbidden}
	_, err = k.UpdateStatus(context.Background(), cached, more)
	require.NoError(t, err)
	assert.Equal(t, 6, w.n)
	w.fail = []error{forbidden, forbidden}
	_, err = k.UpdateStatus(context.Background(), cached, podset.StatusInput{Active: []*corev1.Pod{{}, {}}})
	assert.True(t, apierrors.IsForbidden(err), "the error wraps the cause: %v", err)
	assert.Equal(t, 8, w.n)
}

func TestKindOverATypedOwner(t *testing.T) {
	s := newScheme(t)
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Generation: 3},
		Spec:       appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](4)},
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(rs).WithStatusSubresource(&appsv1.ReplicaSet{}).Build()
	k, err := NewKind[*appsv1.ReplicaSet](replicaSetDescriber{}, c, c, c, s)
	require.NoError(t, err)
	got, err := k.Get("ns", "web")
	require.NoError(t, err)
	assert.EqualValues(t, 4, k.Replicas(got))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{}}}
	written, err := k.UpdateStatus(context.Background(), got, podset.StatusInput{Active: []*corev1.Pod{pod}})
	require.NoError(t, err)
	assert.EqualValues(t, 1, written.Status.Replicas)
	assert.EqualValues(t, 3, written.Status.ObservedGeneration)
}

func TestNewKindRejectsWhatItCannotUse(t *testing.T) {
	s := newScheme(t)
	c := fake.NewClientBuilder().WithScheme(s).Build()
	_, err := NewKind[*appsv1.ReplicaSet](replicaSetDescriber{}, c, c, c, runtime.NewScheme())
	assert.ErrorContains(t, err, "not in the scheme")
	_, err = NewKind[*appsv1.ReplicaSet](mismatchedDescriber{}, c, c, c, s)
	assert.ErrorContains(t, err, "*v1.Deployment", "the scheme's type for the kind is not O")
	_, err = NewKind[*unstructured.Unstructured](noKind{}, c, c, c, s)
	assert.ErrorContains(t, err, "empty GroupVersionKind")
}

// mismatchedDescriber names Deployment for a ReplicaSet owner type.
type mismatchedDescriber struct{ replicaSetDescriber }

func (mismatchedDescriber) GroupVersionKind() schema.GroupVersionKind {
	return appsv1.SchemeGroupVersion.WithKind("Deployment")
}

// noKind describes PodGroups but names no kind.
type noKind struct{ podgroup.Kind }

func (noKind) GroupVersionKind() schema.GroupVersionKind { return schema.GroupVersionKind{} }

// namingPodGroups is the podgroup describer with names to delete first.
type namingPodGroups struct{ podgroup.Kind }

func (namingPodGroups) ChildrenToDeleteFirst(*unstructured.Unstructured) []string {
	return []string{"web-abc"}
}

// Kind forwards a describer's names to delete first, and names nothing for
// a describer without them, which podset syncs as a Kind without them.
func TestKindForwardsTheNamesToDeleteFirst(t *testing.T) {
	s := newScheme(t)
	c := fake.NewClientBuilder().WithScheme(s).Build()
	named, err := NewKind[*unstructured.Unstructured](namingPodGroups{}, c, c, c, s)
	require.NoError(t, err)
	assert.Equal(t, []string{"web-abc"}, named.ChildrenToDeleteFirst(nil))
	plain, err := NewKind[*unstructured.Unstructured](podgroup.Kind{}, c, c, c, s)
	require.NoError(t, err)
	assert.Nil(t, plain.ChildrenToDeleteFirst(nil))
}

// gatedPodGroups is the podgroup describer with a deletion gate.
type gatedPodGroups struct{ podgroup.Kind }

func (gatedPodGroups) DeletionGate(*unstructured.Unstructured) childset.DeletionGate {
	return childset.DeletionGate{Label: "drain", Timeout: time.Minute}
}

// Kind forwards a describer's deletion gate, and has none for a describer
// without it, which podset syncs as a Kind without it.
func TestKindForwardsTheDeletionGate(t *testing.T) {
	s := newScheme(t)
	c := fake.NewClientBuilder().WithScheme(s).Build()
	gated, err := NewKind[*unstructured.Unstructured](gatedPodGroups{}, c, c, c, s)
	require.NoError(t, err)
	assert.Equal(t, childset.DeletionGate{Label: "drain", Timeout: time.Minute}, gated.DeletionGate(nil))
	plain, err := NewKind[*unstructured.Unstructured](podgroup.Kind{}, c, c, c, s)
	require.NoError(t, err)
	assert.Zero(t, plain.DeletionGate(nil))
}
