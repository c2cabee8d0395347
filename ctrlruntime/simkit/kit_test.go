package simkit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/simkit"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

func ownerRef(name string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: demoGV.String(), Kind: "WorkerSet", Name: name, UID: types.UID(name + "-uid"),
		Controller: ptr.To(true)}
}

// Writes through the kit's client are the cluster's: generated names, UIDs
// and resourceVersions, conflicts on stale updates, the refusal of two
// controller references; for custom resources as for pods.
func TestClientWritesGoThroughTheCluster(t *testing.T) {
	kit := newKit(t)
	ctx := kit.StartTest(t)
	c := kit.Client()

	w := &Worker{ObjectMeta: metav1.ObjectMeta{GenerateName: "w-", Namespace: "ns"}, Spec: WorkerSpec{Image: "a"}}
	require.NoError(t, c.Create(ctx, w))
	assert.Len(t, w.Name, len("w-")+5)
	assert.NotEmpty(t, w.UID)
	assert.NotEmpty(t, w.ResourceVersion)
	assert.False(t, w.CreationTimestamp.IsZero())

	stale := w.DeepCopyObject().(*Worker)
	w.Spec.Image = "b"
	require.NoError(t, c.Update(ctx, w))
	assert.NotEqual(t, stale.ResourceVersion, w.ResourceVersion)
	stale.Spec.Image = "c"
	assert.True(t, apierrors.IsConflict(c.Update(ctx, stale)), "a stale update conflicts")

	patch := client.MergeFrom(w.DeepCopyObject().(*Worker))
	w.Labels = map[string]string{"patched": "yes"}
	require.NoError(t, c.Patch(ctx, w, patch))
	var stored Worker
	require.NoError(t, kit.APIReader().Get(ctx, client.ObjectKeyFromObject(w), &stored))
	assert.Equal(t, "b", stored.Spec.Image)
	assert.Equal(t, "yes", stored.Labels["patched"])
	assert.Equal(t, w.ResourceVersion, stored.ResourceVersion)

	two := &Worker{ObjectMeta: metav1.ObjectMeta{Name: "two", Namespace: "ns",
		OwnerReferences: []metav1.OwnerReference{ownerRef("a"), ownerRef("b")}}}
	err := c.Create(ctx, two)
	assert.True(t, apierrors.IsInvalid(err), "two controllers: %v", err)

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "p-", Namespace: "ns"}}
	require.NoError(t, c.Create(ctx, pod))
	assert.NotEmpty(t, pod.UID)
	require.NoError(t, c.Delete(ctx, pod))
	assert.True(t, apierrors.IsNotFound(kit.APIReader().Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})))
}

// The cache follows the cluster, for typed, unstructured and metadata-only
// reads, and stops following a held kind until the release.
func TestCacheFollowsAndHolds(t *testing.T) {
	kit := newKit(t)
	ctx := kit.StartTest(t)
	c := kit.Client()
	require.NoError(t, c.Create(ctx, &Worker{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}}))
	eventuallyCached(ctx, t, c, 1)

	release := kit.HoldWatches(&Worker{})
	require.NoError(t, c.Create(ctx, &Worker{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns"}}))
	require.NoError(t, c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns"}}))
	cmKey := client.ObjectKey{Namespace: "ns", Name: "cm"}
	require.Eventually(t, func() bool { return c.Get(ctx, cmKey, &corev1.ConfigMap{}) == nil },
		30*time.Second, 5*time.Millisecond, "other kinds are not held")

	var direct WorkerList
	require.NoError(t, kit.APIReader().List(ctx, &direct))
	assert.Len(t, direct.Items, 2, "the cluster has the held write")
	time.Sleep(100 * time.Millisecond) // room for a leak to show
	var cached WorkerList
	require.NoError(t, c.List(ctx, &cached))
	assert.Len(t, cached.Items, 1, "the cache has not seen it")
	assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "b"}, &Worker{})))

	// A reader of another form started during the hold lists what the
	// watch cache has, not the held write.
	u := &unstructured.UnstructuredList{}
	u.SetGroupVersionKind(demoGV.WithKind("WorkerList"))
	require.NoError(t, c.List(ctx, u))
	assert.Len(t, u.Items, 1, "an unstructured informer started during the hold")
	partial := &metav1.PartialObjectMetadataList{}
	partial.SetGroupVersionKind(demoGV.WithKind("WorkerList"))
	require.NoError(t, c.List(ctx, partial))
	assert.Len(t, partial.Items, 1, "a metadata informer started during the hold")

	release()
	eventuallyCached(ctx, t, c, 2)
	require.Eventually(t, func() bool { return c.List(ctx, u) == nil && len(u.Items) == 2 }, 30*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return c.List(ctx, partial) == nil && len(partial.Items) == 2 }, 30*time.Second, 5*time.Millisecond)
	assert.Equal(t, "Worker", u.Items[0].GetKind())
}

func eventuallyCached(ctx context.Context, t *testing.T, c client.Reader, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		var l WorkerList
		return c.List(ctx, &l) == nil && len(l.Items) == n
	}, 30*time.Second, 5*time.Millisecond, "the cache never showed %d Workers", n)
}

func TestStartTwiceAndUnknownKinds(t *testing.T) {
	kit := newKit(t)
	ctx := kit.StartTest(t)
	require.True(t, kit.Cache().WaitForCacheSync(ctx), "returns once StartTest's Start runs")
	assert.Error(t, kit.Start(ctx), "a second Start is refused")
	assert.PanicsWithValue(t, "simkit: New: nil scheme", func() { _, _ = simkit.New(nil) })
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(demoGV.WithKind("Unknown"))
	assert.Panics(t, func() { kit.HoldWatches(u) })
}

// WithStatusSubresource gives a custom kind a status subresource, as a
// CRD's subresources.status: Update leaves the status alone, Status().Update
// writes only it.
func TestStatusSubresource(t *testing.T) {
	kit, err := simkit.New(newScheme(), simkit.WithStatusSubresource(&WorkerSet{}))
	require.NoError(t, err)
	ctx := kit.StartTest(t)
	c := kit.Client()
	set := &WorkerSet{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Spec: WorkerSetSpec{Replicas: 1}}
	require.NoError(t, c.Create(ctx, set))

	set.Status.Replicas = 2
	require.NoError(t, c.Status().Update(ctx, set))
	set.Spec.Replicas = 5
	set.Status.Replicas = 7
	require.NoError(t, c.Update(ctx, set))

	var stored WorkerSet
	require.NoError(t, kit.APIReader().Get(ctx, client.ObjectKeyFromObject(set), &stored))
	assert.Equal(t, int32(5), stored.Spec.Replicas)
	assert.Equal(t, int32(2), stored.Status.Replicas, "Update does not write the status")
}

// Cluster-scoped kinds are read from the cache by name alone: client-go's
// (the cluster's nodes) and custom ones declared with WithClusterScoped.
func TestClusterScopedKinds(t *testing.T) {
	kit, err := simkit.New(newScheme(), simkit.WithClusterOptions(simcluster.WithNodes(2)),
		simkit.WithClusterScoped(schema.GroupKind{Group: demoGV.Group, Kind: "WorkerSet"}))
	require.NoError(t, err)
	ctx := kit.StartTest(t)
	var nodes corev1.NodeList
	require.NoError(t, kit.Client().List(ctx, &nodes))
	assert.Len(t, nodes.Items, 2)
	require.NoError(t, kit.Client().Get(ctx, client.ObjectKey{Name: kit.Cluster().Nodes()[0]}, &corev1.Node{}))

	mapping, err := kit.RESTMapper().RESTMapping(schema.GroupKind{Group: demoGV.Group, Kind: "WorkerSet"})
	require.NoError(t, err)
	assert.Equal(t, meta.RESTScopeNameRoot, mapping.Scope.Name())
	mapping, err = kit.RESTMapper().RESTMapping(schema.GroupKind{Group: demoGV.Group, Kind: "Worker"})
	require.NoError(t, err)
	assert.Equal(t, meta.RESTScopeNameNamespace, mapping.Scope.Name())
	assert.Equal(t, "workers", mapping.Resource.Resource)
}
