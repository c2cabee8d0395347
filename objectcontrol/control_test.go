package objectcontrol_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

var ownerKind = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Fake"}

func owner() *v1.ReplicationController {
	return &v1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "default", UID: "123"}}
}

func drain(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func services(client *fake.Clientset) objectcontrol.Writer[*v1.Service] {
	return objectcontrol.TypedWriter(func(ns string) objectcontrol.TypedClient[*v1.Service] { return client.CoreV1().Services(ns) })
}

func serviceControl(client *fake.Clientset, rec record.EventRecorder, opts ...objectcontrol.Option) *objectcontrol.Control[*v1.Service] {
	return objectcontrol.New("Service", services(client), rec, types.StrategicMergePatchType, opts...)
}

func TestControl(t *testing.T) {
	ctx := context.Background()
	rc := owner()
	ref := metav1.NewControllerRef(rc, ownerKind)
	client := fake.NewClientset()
	rec := record.NewFakeRecorder(10)
	sc := serviceControl(client, rec)

	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	created, err := sc.Create(ctx, "default", svc, rc, ref)
	require.NoError(t, err)
	assert.Equal(t, []metav1.OwnerReference{*ref}, created.OwnerReferences)
	assert.Empty(t, svc.OwnerReferences, "the caller's object is not modified")
	assert.Equal(t, []string{"Normal SuccessfulCreate Created Service: web"}, drain(rec))

	_, err = sc.Create(ctx, "default", svc, rc, ref)
	assert.True(t, apierrors.IsAlreadyExists(err))
	assert.Equal(t, []string{"Warning FailedCreate Error creating: " + err.Error()}, drain(rec))
	_, err = sc.Create(ctx, "default", svc, rc, &metav1.OwnerReference{APIVersion: "v1", Kind: "X"})
	assert.ErrorContains(t, err, "controllerRef.Controller is not set to true")

	require.NoError(t, sc.Patch(ctx, "default", "web", []byte(`{"metadata":{"labels":{"a":"b"}}}`)))
	got, err := client.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "b", got.Labels["a"])
	assert.Equal(t, types.StrategicMergePatchType, sc.PatchType())
	patched, err := sc.PatchObject(ctx, "default", "web", []byte(`{"metadata":{"labels":{"c":"d"}}}`))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "b", "c": "d"}, patched.Labels)

	require.NoError(t, sc.Delete(ctx, "default", "web", rc))
	assert.Equal(t, []string{"Normal SuccessfulDelete Deleted Service: web"}, drain(rec))
	assert.True(t, apierrors.IsNotFound(sc.Delete(ctx, "default", "web", rc)), "NotFound returned by default")
	assert.NoError(t, serviceControl(client, rec, objectcontrol.WithNotFoundAsSuccess()).Delete(ctx, "default", "web", rc))
	assert.Empty(t, drain(rec))
	assert.ErrorContains(t, sc.Delete(ctx, "default", "web", nil), "ObjectMeta", "an owner without metadata is refused")

	client.PrependReactor("delete", "services", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("boom")
	})
	err = serviceControl(client, rec, objectcontrol.WithEventReasons(objectcontrol.EventReasons{FailedDelete: "ServiceDeleteFailed"})).Delete(ctx, "default", "web", rc)
	assert.EqualError(t, err, "unable to delete Service default/web: boom")
	assert.Equal(t, []string{"Warning ServiceDeleteFailed Error deleting: boom"}, drain(rec))
}

// Services and config maps are sometimes created without a controller: a
// nil reference sends the object with the owner references it has. The
// earlier control refused a nil reference.
func TestCreateWithoutControllerRef(t *testing.T) {
	ctx := context.Background()
	rc := owner()
	client := fake.NewClientset()
	rec := record.NewFakeRecorder(10)
	sc := serviceControl(client, rec)

	plain, err := sc.Create(ctx, "default", &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}, rc, nil)
	require.NoError(t, err)
	assert.Empty(t, plain.OwnerReferences)
	assert.Equal(t, []string{"Normal SuccessfulCreate Created Service: plain"}, drain(rec))

	nonController := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cfg", UID: "cfg-uid"}
	shared, err := sc.Create(ctx, "default", &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "shared",
		OwnerReferences: []metav1.OwnerReference{nonController}}}, rc, nil)
	require.NoError(t, err)
	assert.Equal(t, []metav1.OwnerReference{nonController}, shared.OwnerReferences, "the object's own references are kept")
	assert.Nil(t, metav1.GetControllerOf(shared))
}

func TestNamespaceTerminatingRecordsNoEvent(t *testing.T) {
	client := fake.NewClientset()
	terminating := apierrors.NewForbidden(v1.Resource("services"), "", errors.New("namespace default is being terminated"))
	terminating.ErrStatus.Details.Causes = append(terminating.ErrStatus.Details.Causes, metav1.StatusCause{Type: v1.NamespaceTerminatingCause})
	client.PrependReactor("create", "services", func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, terminating })
	rec := record.NewFakeRecorder(10)
	_, err := serviceControl(client, rec).Create(context.Background(), "default", &v1.Service{}, owner(), nil)
	assert.ErrorIs(t, err, terminating)
	assert.Empty(t, drain(rec))
}

// deadlineWriter records the deadline of each call's context.
type deadlineWriter struct {
	deadlines []time.Time
}

func (w *deadlineWriter) note(ctx context.Context) {
	d, ok := ctx.Deadline()
	if !ok {
		d = time.Time{}
	}
	w.deadlines = append(w.deadlines, d)
}

func (w *deadlineWriter) Create(ctx context.Context, _ string, obj *v1.ConfigMap) (*v1.ConfigMap, error) {
	w.note(ctx)
	return obj, nil
}

func (w *deadlineWriter) Delete(ctx context.Context, _, _ string) error {
	w.note(ctx)
	return nil
}

func (w *deadlineWriter) Patch(ctx context.Context, _, name string, _ types.PatchType, _ []byte) (*v1.ConfigMap, error) {
	w.note(ctx)
	return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
}

// Every write carries a deadline: the default, the configured one, or the
// caller's when it is earlier.
func TestEveryWriteHasADeadline(t *testing.T) {
	ctx := context.Background()
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}
	check := func(t *testing.T, ctx context.Context, timeout time.Duration, opts ...objectcontrol.Option) {
		t.Helper()
		w := &deadlineWriter{}
		c := objectcontrol.New("ConfigMap", w, nil, types.MergePatchType, opts...)
		start := time.Now()
		_, err := c.Create(ctx, "default", cm, owner(), nil)
		require.NoError(t, err)
		require.NoError(t, c.Delete(ctx, "default", "cm", owner()))
		require.NoError(t, c.Patch(ctx, "default", "cm", []byte(`{}`)))
		require.Len(t, w.deadlines, 3)
		for i, d := range w.deadlines {
			require.False(t, d.IsZero(), "write %d has no deadline", i)
			assert.WithinDuration(t, start.Add(timeout), d, time.Second, "write %d", i)
		}
	}
	t.Run("default", func(t *testing.T) { check(t, ctx, objectcontrol.DefaultWriteTimeout) })
	t.Run("configured", func(t *testing.T) { check(t, ctx, 5*time.Second, objectcontrol.WithWriteTimeout(5*time.Second)) })
	t.Run("caller's earlier deadline", func(t *testing.T) {
		short, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		check(t, short, 2*time.Second)
	})
	t.Run("caller's later deadline", func(t *testing.T) {
		long, cancel := context.WithTimeout(ctx, time.Hour)
		defer cancel()
		check(t, long, 5*time.Second, objectcontrol.WithWriteTimeout(5*time.Second))
	})
	assert.PanicsWithValue(t, "objectcontrol: WithWriteTimeout: the timeout must be positive, not 0s", func() { objectcontrol.WithWriteTimeout(0) })
}

func TestNewNilWriter(t *testing.T) {
	assert.PanicsWithValue(t, "objectcontrol: New: nil writer", func() {
		objectcontrol.New[*v1.Service]("Service", nil, nil, types.StrategicMergePatchType)
	})
}
