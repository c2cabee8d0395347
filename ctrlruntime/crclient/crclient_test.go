package crclient_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/crclient"
	"github.com/ctrlkit/ctrlkit/podcontrol"
	"github.com/ctrlkit/ctrlkit/slowstart"
)

var rsKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")

func replicaSet() *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "rs-uid"}}
}

func refTo(rs *appsv1.ReplicaSet) *metav1.OwnerReference {
	return metav1.NewControllerRef(rs, rsKind)
}

func template() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}},
	}
}

func TestPodControlCreatesWithEvents(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	rec := record.NewFakeRecorder(10)
	pc := crclient.NewPodControl(c, rec)
	rs := replicaSet()

	require.NoError(t, pc.CreatePods(ctx, "ns", template(), rs, refTo(rs)))
	require.NoError(t, pc.CreatePodsWithGenerateName(ctx, "ns", template(), rs, refTo(rs), "custom-"))

	pods := &corev1.PodList{}
	require.NoError(t, c.List(ctx, pods, client.InNamespace("ns")))
	require.Len(t, pods.Items, 2)
	prefixes := map[string]bool{}
	names := map[string]string{}
	for _, p := range pods.Items {
		prefixes[p.GenerateName] = true
		names[p.GenerateName] = p.Name
		assert.Equal(t, map[string]string{"app": "web"}, p.Labels)
		ref := metav1.GetControllerOf(&p)
		require.NotNil(t, ref)
		assert.Equal(t, types.UID("rs-uid"), ref.UID)
	}
	assert.Equal(t, map[string]bool{"web-": true, "custom-": true}, prefixes)
	assert.Equal(t, "Normal SuccessfulCreate Created pod: "+names["web-"], <-rec.Events)
	assert.Equal(t, "Normal SuccessfulCreate Created pod: "+names["custom-"], <-rec.Events)

	// Refused before any write.
	noLabels := template()
	noLabels.Labels = nil
	assert.ErrorIs(t, pc.CreatePods(ctx, "ns", noLabels, rs, refTo(rs)), podcontrol.ErrNoLabels)
	assert.Error(t, pc.CreatePods(ctx, "ns", template(), rs, nil))
}

func TestPodControlCreateFailureRecordsWarning(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return boom },
	}).Build()
	rec := record.NewFakeRecorder(10)
	rs := replicaSet()
	err := crclient.NewPodControl(c, rec).CreatePods(ctx, "ns", template(), rs, refTo(rs))
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, "Warning FailedCreate Error creating: boom", <-rec.Events)
}

func TestPodControlDeletes(t *testing.T) {
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	c := fake.NewClientBuilder().WithObjects(pod).Build()
	rec := record.NewFakeRecorder(10)
	pc := crclient.NewPodControl(c, nil) // a nil recorder records nothing
	rs := replicaSet()
	require.NoError(t, pc.DeletePod(ctx, "ns", "p", rs))
	assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})))

	pc = crclient.NewPodControl(c, rec)
	err := pc.DeletePod(ctx, "ns", "p", rs)
	assert.True(t, apierrors.IsNotFound(err), "NotFound is returned as is: %v", err)
	assert.Empty(t, rec.Events)
	assert.Error(t, pc.DeletePod(ctx, "ns", "p", nil), "an owner without metadata is refused")
}

// The claim ref manager adopts and releases through crclient's pod control
// over the controller-runtime client.
func TestClaimPodsThroughControllerRuntimeClient(t *testing.T) {
	ctx := context.Background()
	rs := replicaSet()
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "orphan", UID: "o-uid", Labels: map[string]string{"app": "web"}}}
	stray := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "stray", UID: "s-uid", Labels: map[string]string{"app": "other"},
		OwnerReferences: []metav1.OwnerReference{*refTo(rs)}}}
	c := fake.NewClientBuilder().WithObjects(orphan, stray).Build()
	pc := crclient.NewPodControl(c, nil)
	m := claim.NewPodControllerRefManager(pc, rs, labels.SelectorFromSet(labels.Set{"app": "web"}), rsKind, nil)

	owned, err := m.ClaimPods(ctx, []*corev1.Pod{orphan.DeepCopy(), stray.DeepCopy()})
	require.NoError(t, err)
	require.Len(t, owned, 1)
	assert.Equal(t, "orphan", owned[0].Name)

	got := &corev1.Pod{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(orphan), got))
	require.NotNil(t, metav1.GetControllerOf(got))
	assert.Equal(t, types.UID("rs-uid"), metav1.GetControllerOf(got).UID)
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(stray), got))
	assert.Nil(t, metav1.GetControllerOf(got), "the non-matching pod is released")
}

// The generic Patcher adopts objects of any kind; here ConfigMaps with JSON
// merge patches, as a custom resource would need.
func TestPatcherForAnyKind(t *testing.T) {
	ctx := context.Background()
	rs := replicaSet()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", UID: "cm-uid", ResourceVersion: "", Labels: map[string]string{"app": "web"}}}
	c := fake.NewClientBuilder().WithObjects(cm).Build()
	p, err := crclient.NewPatcher(c, corev1.SchemeGroupVersion.WithKind("ConfigMap"), types.MergePatchType)
	require.NoError(t, err)
	assert.Equal(t, types.MergePatchType, p.PatchType())
	m := claim.NewObjectControllerRefManager[*corev1.ConfigMap](p, rs, labels.SelectorFromSet(labels.Set{"app": "web"}), rsKind, nil)

	current := &corev1.ConfigMap{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), current))
	owned, err := m.Claim(ctx, []*corev1.ConfigMap{current})
	require.NoError(t, err)
	require.Len(t, owned, 1)
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), current))
	require.NotNil(t, metav1.GetControllerOf(current))
	assert.Equal(t, types.UID("rs-uid"), metav1.GetControllerOf(current).UID)

	err = p.Patch(ctx, "ns", "missing", []byte(`{"metadata":{"labels":{"a":"b"}}}`))
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
}

func TestNewPatcherRejectsBadInput(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	_, err := crclient.NewPatcher(c, corev1.SchemeGroupVersion.WithKind("ConfigMap"), types.JSONPatchType)
	assert.Error(t, err)
	_, err = crclient.NewPatcher(c, corev1.SchemeGroupVersion.WithKind(""), types.MergePatchType)
	assert.Error(t, err)
}

// Slow start over the controller-runtime client: the first failure stops
// the batches and the remaining creates are skipped.
func TestSlowStartOverControllerRuntimeClient(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	created := 0
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			mu.Lock()
			defer mu.Unlock()
			if created == 3 {
				return apierrors.NewForbidden(corev1.Resource("pods"), "", errors.New("quota"))
			}
			created++
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	pc := crclient.NewPodControl(c, nil)
	rs := replicaSet()
	ok, err := slowstart.Batch(ctx, 10, slowstart.InitialBatchSize, func(ctx context.Context) error {
		return pc.CreatePods(ctx, "ns", template(), rs, refTo(rs))
	})
	assert.Error(t, err)
	assert.Equal(t, 3, ok)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 3, created)
}
