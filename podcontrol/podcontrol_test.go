package podcontrol

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
)

func podTemplate() *v1.PodTemplateSpec {
	return &v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"app": "web"},
			Annotations: map[string]string{"note": "x"},
			Finalizers:  []string{"example.com/f"},
		},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "nginx"}}},
	}
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

func namespaceTerminating() error {
	err := apierrors.NewForbidden(podGR, "", errors.New("namespace default is being terminated"))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: v1.NamespaceTerminatingCause})
	return err
}

func TestRealPodControlCreate(t *testing.T) {
	ctx := context.Background()
	rc := controller("default", "123", false)
	ref := metav1.NewControllerRef(rc, fakeKind)
	errBoom := errors.New("boom")
	tests := []struct {
		name         string
		template     *v1.PodTemplateSpec
		ref          *metav1.OwnerReference
		generateName string
		createErr    error
		wantErr      string
		wantEvents   []string
		wantGenName  string
		wantCreate   bool
	}{
		{name: "create", template: podTemplate(), ref: ref, wantCreate: true, wantGenName: "rc-",
			wantEvents: []string{"Normal SuccessfulCreate Created pod: "}},
		{name: "create with generate name", template: podTemplate(), ref: ref, generateName: "hello-", wantCreate: true, wantGenName: "hello-",
			wantEvents: []string{"Normal SuccessfulCreate Created pod: "}},
		{name: "api error records FailedCreate", template: podTemplate(), ref: ref, createErr: errBoom, wantErr: "boom",
			wantEvents: []string{"Warning FailedCreate Error creating: boom"}},
		{name: "terminating namespace records nothing", template: podTemplate(), ref: ref, createErr: namespaceTerminating(),
			wantErr: "being terminated"},
		{name: "no labels refused", template: &v1.PodTemplateSpec{}, ref: ref, wantErr: ErrNoLabels.Error()},
		{name: "nil ref", template: podTemplate(), ref: nil, wantErr: "controllerRef is nil"},
		{name: "ref not controller", template: podTemplate(), ref: &metav1.OwnerReference{APIVersion: "v1", Kind: "X"}, wantErr: "controllerRef.Controller is not set to true"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset()
			if tc.createErr != nil {
				client.PrependReactor("create", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, tc.createErr
				})
			}
			rec := record.NewFakeRecorder(10)
			pc := NewRealPodControl(client, rec)
			var err error
			if tc.generateName == "" {
				err = pc.CreatePods(ctx, "default", tc.template, rc, tc.ref)
			} else {
				err = pc.CreatePodsWithGenerateName(ctx, "default", tc.template, rc, tc.ref, tc.generateName)
			}
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantEvents, drain(rec))
			var creates []*v1.Pod
			for _, a := range client.Actions() {
				if a.GetVerb() == "create" && tc.createErr == nil {
					creates = append(creates, a.(clienttesting.CreateAction).GetObject().(*v1.Pod))
				}
			}
			if !tc.wantCreate {
				assert.Empty(t, creates)
				return
			}
			require.Len(t, creates, 1)
			sent := creates[0]
			assert.Equal(t, tc.wantGenName, sent.GenerateName)
			assert.Equal(t, tc.template.Labels, sent.Labels)
			assert.Equal(t, tc.template.Annotations, sent.Annotations)
			assert.Equal(t, tc.template.Finalizers, sent.Finalizers)
			assert.Equal(t, tc.template.Spec, sent.Spec)
			assert.Equal(t, []metav1.OwnerReference{*ref}, sent.OwnerReferences)
		})
	}
}

func TestRealPodControlDelete(t *testing.T) {
	ctx := context.Background()
	rc := controller("default", "123", false)
	errBoom := errors.New("boom")
	existing := newPod("p", productionLabel, rc)
	tests := []struct {
		name       string
		pod        string
		object     runtime.Object
		deleteErr  error
		wantErr    func(error) bool
		wantEvents []string
	}{
		{name: "deleted", pod: "p", object: rc, wantEvents: []string{"Normal SuccessfulDelete Deleted pod: p"}},
		{name: "missing pod: NotFound returned, no event", pod: "missing", object: rc, wantErr: apierrors.IsNotFound},
		{name: "error: FailedDelete and wrapped", pod: "p", object: rc, deleteErr: errBoom,
			wantErr: func(err error) bool {
				return errors.Is(err, errBoom) && strings.HasPrefix(err.Error(), "unable to delete pod default/p: ")
			},
			wantEvents: []string{"Warning FailedDelete Error deleting: boom"}},
		{name: "object without metadata", pod: "p", object: nil, wantErr: func(err error) bool { return strings.Contains(err.Error(), "ObjectMeta") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(existing.DeepCopy())
			if tc.deleteErr != nil {
				client.PrependReactor("delete", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, tc.deleteErr
				})
			}
			rec := record.NewFakeRecorder(10)
			err := NewRealPodControl(client, rec).DeletePod(ctx, "default", tc.pod, tc.object)
			if tc.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.True(t, tc.wantErr(err), "unexpected error %v", err)
			}
			assert.Equal(t, tc.wantEvents, drain(rec))
		})
	}
}

// Upstream's TestDeletePodsAllowsMissing.
func TestDeletePodsAllowsMissing(t *testing.T) {
	pc := NewRealPodControl(fake.NewClientset(), record.NewFakeRecorder(10))
	err := pc.DeletePod(context.Background(), "namespace-name", "podName", controller("default", "1", false))
	assert.True(t, apierrors.IsNotFound(err))
}

func TestRealPodControlPatch(t *testing.T) {
	ctx := context.Background()
	rc := controller("default", "123", false)
	client := fake.NewClientset(newPod("p", productionLabel, nil))
	pc := NewRealPodControl(client, nil)
	adopt := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"Fake","name":"rc","uid":%q,"controller":true,"blockOwnerDeletion":true}],"uid":"uid-p"}}`, rc.UID)
	require.NoError(t, pc.PatchPod(ctx, "default", "p", []byte(adopt)))
	got, err := client.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
	require.NoError(t, err)
	require.NotNil(t, metav1.GetControllerOf(got))
	assert.Equal(t, rc.UID, metav1.GetControllerOf(got).UID)

	err = pc.PatchPod(ctx, "default", "missing", []byte(`{}`))
	assert.True(t, apierrors.IsNotFound(err))
}

func TestRealPodControlNilRecorder(t *testing.T) {
	ctx := context.Background()
	rc := controller("default", "123", false)
	ref := metav1.NewControllerRef(rc, fakeKind)
	pc := NewRealPodControl(fake.NewClientset(), nil)
	require.NoError(t, pc.CreatePods(ctx, "default", podTemplate(), rc, ref), "a nil recorder records nothing")
}

func TestRealPodControlCreatePodWithName(t *testing.T) {
	ctx := context.Background()
	rc := controller("default", "123", false)
	ref := metav1.NewControllerRef(rc, fakeKind)
	client := fake.NewClientset()
	rec := record.NewFakeRecorder(10)
	pc := NewRealPodControl(client, rec)
	require.NoError(t, pc.CreatePodWithName(ctx, "default", "worker-0", podTemplate(), rc, ref))
	got, err := client.CoreV1().Pods("default").Get(ctx, "worker-0", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, got.GenerateName)
	assert.Equal(t, []metav1.OwnerReference{*ref}, got.OwnerReferences)
	assert.Equal(t, []string{"Normal SuccessfulCreate Created pod: worker-0"}, drain(rec))

	err = pc.CreatePodWithName(ctx, "default", "worker-0", podTemplate(), rc, ref)
	assert.True(t, apierrors.IsAlreadyExists(err), "%v", err)
	assert.Equal(t, []string{"Warning FailedCreate Error creating: " + err.Error()}, drain(rec))
	assert.ErrorIs(t, pc.CreatePodWithName(ctx, "default", "worker-1", &v1.PodTemplateSpec{}, rc, ref), ErrNoLabels)
}

func TestRealPodControlOptions(t *testing.T) {
	ctx := context.Background()
	rc := controller("default", "123", false)
	ref := metav1.NewControllerRef(rc, fakeKind)
	rec := record.NewFakeRecorder(10)
	pc := NewRealPodControl(fake.NewClientset(), rec,
		WithEventReasons(EventReasons{SuccessfulCreate: "WorkerCreated", SuccessfulDelete: "WorkerDeleted"}), WithNotFoundAsSuccess())
	require.NoError(t, pc.CreatePodWithName(ctx, "default", "w", podTemplate(), rc, ref))
	require.NoError(t, pc.DeletePod(ctx, "default", "w", rc))
	require.NoError(t, pc.DeletePod(ctx, "default", "w", rc), "NotFound is success with the option")
	assert.Equal(t, []string{"Normal WorkerCreated Created pod: w", "Normal WorkerDeleted Deleted pod: w"}, drain(rec))

	// Unset reasons keep upstream's.
	client := fake.NewClientset()
	client.PrependReactor("delete", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("boom")
	})
	pc = NewRealPodControl(client, rec, WithEventReasons(EventReasons{SuccessfulCreate: "X"}))
	assert.Error(t, pc.DeletePod(ctx, "default", "w", rc))
	assert.Equal(t, []string{"Warning FailedDelete Error deleting: boom"}, drain(rec))
}

// stubPodWriter answers every write itself and remembers whether its
// context had a deadline.
type stubPodWriter struct{ deadlines []bool }

func (w *stubPodWriter) Create(ctx context.Context, namespace string, pod *v1.Pod) (*v1.Pod, error) {
	_, ok := ctx.Deadline()
	w.deadlines = append(w.deadlines, ok)
	pod.Namespace = namespace
	if pod.Name == "" {
		pod.Name = pod.GenerateName + "x"
	}
	return pod, nil
}

func (w *stubPodWriter) Delete(ctx context.Context, _, _ string) error {
	_, ok := ctx.Deadline()
	w.deadlines = append(w.deadlines, ok)
	return nil
}

func (w *stubPodWriter) Patch(ctx context.Context, namespace, name string, _ types.PatchType, _ []byte) (*v1.Pod, error) {
	_, ok := ctx.Deadline()
	w.deadlines = append(w.deadlines, ok)
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}, nil
}

// Any PodWriter gets RealPodControl's rules: the built pod, the events and
// a deadline on every write.
func TestPodControlOverAnyWriter(t *testing.T) {
	ctx := context.Background()
	rc := controller("default", "123", false)
	ref := metav1.NewControllerRef(rc, fakeKind)
	w := &stubPodWriter{}
	rec := record.NewFakeRecorder(10)
	pc := NewPodControl(w, rec, WithWriteTimeout(time.Minute), WithEventReasons(EventReasons{SuccessfulCreate: "PodCreated"}))
	require.NoError(t, pc.CreatePods(ctx, "default", podTemplate(), rc, ref))
	require.NoError(t, pc.CreatePodWithName(ctx, "default", "w-0", podTemplate(), rc, ref))
	require.NoError(t, pc.DeletePod(ctx, "default", "w-0", rc))
	require.NoError(t, pc.PatchPod(ctx, "default", "w-0", []byte(`{}`)))
	assert.Equal(t, []bool{true, true, true, true}, w.deadlines)
	assert.Equal(t, []string{"Normal PodCreated Created pod: rc-x", "Normal PodCreated Created pod: w-0", "Normal SuccessfulDelete Deleted pod: w-0"}, drain(rec))
	assert.ErrorIs(t, pc.CreatePods(ctx, "default", &v1.PodTemplateSpec{}, rc, ref), ErrNoLabels)
	assert.Len(t, w.deadlines, 4, "a refused create sends nothing")
}
