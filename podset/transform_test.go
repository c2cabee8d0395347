package podset

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/internal/trimtest"
	"github.com/ctrlkit/ctrlkit/podranking"
	"github.com/ctrlkit/ctrlkit/podstate"
)

// TestControllerOnTrimmedPods runs this package's tests again on pods passed
// through TrimPod: the env's pod informer transforms what it receives and
// addPods trims what it adds. If the controller read a field TrimPod drops,
// some decision would change and a test would fail.
func TestControllerOnTrimmedPods(t *testing.T) {
	if !trimtest.Enabled() {
		trimtest.RunPackage(t)
	}
}

func fullPod() *v1.Pod {
	created := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	return &v1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "p", GenerateName: "p-", Namespace: "ns", UID: "uid-p", ResourceVersion: "42", Generation: 3,
			CreationTimestamp: created, DeletionTimestamp: ptr.To(metav1.NewTime(created.Add(time.Hour))),
			DeletionGracePeriodSeconds: ptr.To[int64](30),
			Labels:                     map[string]string{"app": "web"},
			Annotations:                map[string]string{podranking.DeletionCostAnnotation: "-5", "note": "dropped"},
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "uid-rs", Controller: ptr.To(true)},
				{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "uid-cm"},
			},
			Finalizers:    []string{"example.com/keep"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}},
		},
		Spec: v1.PodSpec{
			NodeName:   "node-1",
			Containers: []v1.Container{{Name: "app", Image: "img"}, {Name: "log", Image: "img"}},
			InitContainers: []v1.Container{
				{Name: "setup", Image: "img"},
				{Name: "proxy", Image: "img", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways)},
				{Name: "agent", Image: "img", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways)},
			},
		},
		Status: v1.PodStatus{
			Phase: v1.PodRunning, PodIP: "10.0.0.1", QOSClass: v1.PodQOSBestEffort,
			Conditions: []v1.PodCondition{
				{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: created},
				{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: created, Reason: "r", Message: "m"},
				{Type: v1.PodReady, Status: v1.ConditionFalse},
			},
			ContainerStatuses: []v1.ContainerStatus{
				{Name: "app", RestartCount: 2, Image: "img", Ready: true},
				{Name: "log", RestartCount: 7, Image: "img"},
			},
			InitContainerStatuses: []v1.ContainerStatus{
				{Name: "setup", RestartCount: 9},
				{Name: "proxy", RestartCount: 4},
				{Name: "agent", RestartCount: 1},
			},
		},
	}
}

func TestTrimPodKeepsWhatTheControllerReads(t *testing.T) {
	in := fullPod()
	orig := in.DeepCopy()
	got, err := TrimPod(in)
	require.NoError(t, err)
	assert.Equal(t, orig, in, "the input is not modified")
	created := in.CreationTimestamp
	want := &v1.Pod{
		TypeMeta: in.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: "p", Namespace: "ns", UID: "uid-p", ResourceVersion: "42",
			CreationTimestamp: created, DeletionTimestamp: in.DeletionTimestamp,
			Labels:          in.Labels,
			Annotations:     map[string]string{podranking.DeletionCostAnnotation: "-5"},
			OwnerReferences: in.OwnerReferences, Finalizers: in.Finalizers,
		},
		Spec: v1.PodSpec{
			NodeName:       "node-1",
			InitContainers: []v1.Container{{Name: "proxy", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways)}},
		},
		Status: v1.PodStatus{
			Phase:                 v1.PodRunning,
			Conditions:            []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: created}},
			ContainerStatuses:     []v1.ContainerStatus{{Name: "log", RestartCount: 7}},
			InitContainerStatuses: []v1.ContainerStatus{{Name: "proxy", RestartCount: 4}},
		},
	}
	assert.Equal(t, want, got)

	// What the controller derives from a pod is the same either way.
	trimmed := got.(*v1.Pod)
	for _, p := range []*v1.Pod{in, trimmed} {
		regular, sidecar := podstate.MaxContainerRestarts(p)
		assert.Equal(t, [2]int32{7, 4}, [2]int32{regular, sidecar})
		assert.True(t, podstate.IsReady(p))
		assert.Equal(t, created, podstate.ReadyTime(p))
		assert.Equal(t, "ns/p", podstate.Key(p))
	}

	again, err := TrimPod(trimmed)
	require.NoError(t, err)
	assert.Equal(t, trimmed, again, "idempotent")
}

func TestTrimPodSparsePods(t *testing.T) {
	bare := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: "ns"}}
	got, err := TrimPod(bare)
	require.NoError(t, err)
	assert.Equal(t, bare, got, "a pod with nothing to drop is kept whole")

	// No restarts, sidecar statuses without a sidecar spec, an unready pod.
	p := fullPod()
	p.Spec.InitContainers = nil
	p.Status.ContainerStatuses[0].RestartCount, p.Status.ContainerStatuses[1].RestartCount = 0, -3
	p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}}
	p.Annotations = map[string]string{"note": "dropped"}
	got, err = TrimPod(p)
	require.NoError(t, err)
	trimmed := got.(*v1.Pod)
	assert.Nil(t, trimmed.Status.ContainerStatuses)
	assert.Nil(t, trimmed.Status.InitContainerStatuses)
	assert.Nil(t, trimmed.Spec.InitContainers)
	assert.Nil(t, trimmed.Annotations)
	assert.Equal(t, []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}}, trimmed.Status.Conditions)
	regular, sidecar := podstate.MaxContainerRestarts(p)
	tRegular, tSidecar := podstate.MaxContainerRestarts(trimmed)
	assert.Equal(t, [2]int32{regular, sidecar}, [2]int32{tRegular, tSidecar})

	for _, other := range []any{"not a pod", cache.DeletedFinalStateUnknown{Key: "ns/p", Obj: fullPod()}, (*v1.Pod)(nil)} {
		got, err := TrimPod(other)
		require.NoError(t, err)
		assert.Equal(t, other, got, "anything but a pod passes unchanged")
	}
}
