package crclient_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/crclient"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// What podcontrol's pod control does, crclient's does: it is the same
// control over another writer. These failed to compile before, when
// crclient had its own copy of the rules without them.

func TestPodControlCreatesWithName(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	rec := record.NewFakeRecorder(10)
	var pc podcontrol.NamedPodCreator = crclient.NewPodControl(c, rec)
	rs := replicaSet()

	require.NoError(t, pc.CreatePodWithName(ctx, "ns", "web-0", template(), rs, refTo(rs)))
	got := &corev1.Pod{}
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web-0"}, got))
	assert.Empty(t, got.GenerateName)
	assert.Equal(t, map[string]string{"app": "web"}, got.Labels)
	require.NotNil(t, metav1.GetControllerOf(got))
	assert.Equal(t, types.UID("rs-uid"), metav1.GetControllerOf(got).UID)
	assert.Equal(t, "Normal SuccessfulCreate Created pod: web-0", <-rec.Events)

	err := pc.CreatePodWithName(ctx, "ns", "web-0", template(), rs, refTo(rs))
	assert.True(t, apierrors.IsAlreadyExists(err), "%v", err)
	assert.Equal(t, "Warning FailedCreate Error creating: "+err.Error(), <-rec.Events)
	assert.ErrorIs(t, pc.CreatePodWithName(ctx, "ns", "web-1", &corev1.PodTemplateSpec{}, rs, refTo(rs)), podcontrol.ErrNoLabels)
	assert.Error(t, pc.CreatePodWithName(ctx, "ns", "web-1", template(), rs, nil))
	assert.Empty(t, rec.Events)
}

func TestPodControlEventReasons(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	failDeletes := false
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if failDeletes {
				return boom
			}
			return c.Delete(ctx, obj, opts...)
		},
	}).Build()
	rec := record.NewFakeRecorder(10)
	pc := crclient.NewPodControl(c, rec, podcontrol.WithEventReasons(podcontrol.EventReasons{
		SuccessfulCreate: "WorkerCreated", SuccessfulDelete: "WorkerDeleted", FailedDelete: "WorkerDeleteFailed",
	}))
	rs := replicaSet()
	require.NoError(t, pc.CreatePodWithName(ctx, "ns", "w", template(), rs, refTo(rs)))
	require.NoError(t, pc.DeletePod(ctx, "ns", "w", rs))
	require.NoError(t, pc.CreatePodWithName(ctx, "ns", "w", template(), rs, refTo(rs)))
	failDeletes = true
	err := pc.DeletePod(ctx, "ns", "w", rs)
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, []string{
		"Normal WorkerCreated Created pod: w",
		"Normal WorkerDeleted Deleted pod: w",
		"Normal WorkerCreated Created pod: w",
		"Warning WorkerDeleteFailed Error deleting: boom",
	}, []string{<-rec.Events, <-rec.Events, <-rec.Events, <-rec.Events})
}

func TestPodControlNotFoundAsSuccess(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	rec := record.NewFakeRecorder(10)
	rs := replicaSet()
	assert.True(t, apierrors.IsNotFound(crclient.NewPodControl(c, rec).DeletePod(ctx, "ns", "gone", rs)), "NotFound is returned by default")
	assert.NoError(t, crclient.NewPodControl(c, rec, podcontrol.WithNotFoundAsSuccess()).DeletePod(ctx, "ns", "gone", rs))
	assert.Empty(t, rec.Events, "a pod already gone records no event")
}

// Every write through the controller-runtime client carries a deadline.
func TestPodControlWritesHaveDeadlines(t *testing.T) {
	ctx := context.Background()
	var withDeadline []bool
	note := func(ctx context.Context) { _, ok := ctx.Deadline(); withDeadline = append(withDeadline, ok) }
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			note(ctx)
			return c.Create(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			note(ctx)
			return c.Delete(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			note(ctx)
			return c.Patch(ctx, obj, patch, opts...)
		},
	}).Build()
	pc := crclient.NewPodControl(c, nil)
	rs := replicaSet()
	require.NoError(t, pc.CreatePodWithName(ctx, "ns", "p", template(), rs, refTo(rs)))
	require.NoError(t, pc.PatchPod(ctx, "ns", "p", []byte(`{"metadata":{"labels":{"a":"b"}}}`)))
	require.NoError(t, pc.DeletePod(ctx, "ns", "p", rs))
	assert.Equal(t, []bool{true, true, true}, withDeadline)
}

// Objects of other kinds get the same control; a ConfigMap without a
// controller reference is allowed.
func TestObjectControlOverControllerRuntimeClient(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	rec := record.NewFakeRecorder(10)
	var cms objectcontrol.Interface[*corev1.ConfigMap] = crclient.NewObjectControl[*corev1.ConfigMap](c, "ConfigMap", rec, types.StrategicMergePatchType)
	rs := replicaSet()

	owned, err := cms.Create(ctx, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owned"}}, rs, refTo(rs))
	require.NoError(t, err)
	assert.Equal(t, types.UID("rs-uid"), metav1.GetControllerOf(owned).UID)
	assert.NotEmpty(t, owned.ResourceVersion, "what the API server stored")
	shared, err := cms.Create(ctx, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared"}}, rs, nil)
	require.NoError(t, err)
	assert.Nil(t, metav1.GetControllerOf(shared))

	require.NoError(t, cms.Patch(ctx, "ns", "shared", []byte(`{"data":{"k":"v"}}`)))
	got := &corev1.ConfigMap{}
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "shared"}, got))
	assert.Equal(t, map[string]string{"k": "v"}, got.Data)
	require.NoError(t, cms.Delete(ctx, "ns", "shared", rs))
	assert.True(t, apierrors.IsNotFound(cms.Delete(ctx, "ns", "shared", rs)))
	assert.Equal(t, []string{
		"Normal SuccessfulCreate Created ConfigMap: owned",
		"Normal SuccessfulCreate Created ConfigMap: shared",
		"Normal SuccessfulDelete Deleted ConfigMap: shared",
	}, []string{<-rec.Events, <-rec.Events, <-rec.Events})

	_, err = cms.Create(ctx, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "elsewhere", Name: "x"}}, rs, nil)
	assert.ErrorContains(t, err, `the object names namespace "elsewhere"`)
}

func TestNewWriterRefusesBadInput(t *testing.T) {
	assert.PanicsWithValue(t, "crclient: NewWriter: nil client", func() { crclient.NewWriter[*corev1.Pod](nil) })
	c := fake.NewClientBuilder().Build()
	// The interface's printed name differs between controller-runtime
	// releases (v0.25 declares client.Object as an alias), so only the
	// message's stable part is checked.
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		crclient.NewWriter[client.Object](c)
	}()
	assert.Contains(t, fmt.Sprint(recovered), "Object is not a pointer to an API struct")
}
