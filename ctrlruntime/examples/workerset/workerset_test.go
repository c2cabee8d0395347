package workerset_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/workerset"
)

func newSet(replicas int32) *workerset.WorkerSet {
	return &workerset.WorkerSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pool", UID: "pool-uid"},
		Spec: workerset.WorkerSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "a"}},
			Template: workerset.WorkerTemplate{
				Metadata: workerset.TemplateMetadata{Labels: map[string]string{"pool": "a"}, Annotations: map[string]string{"note": "x"}},
				Spec:     workerset.WorkerSpec{MachineClass: "m5.large", Image: "worker:1"},
			},
		},
	}
}

func worker(name string, ready bool, owner *workerset.WorkerSet) *workerset.Worker {
	w := &workerset.Worker{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"pool": "a"}},
		Status:     workerset.WorkerStatus{Ready: ready},
	}
	if owner != nil {
		w.OwnerReferences = []metav1.OwnerReference{{APIVersion: workerset.GroupVersion.String(), Kind: "WorkerSet",
			Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}
	}
	return w
}

// reconcileOnce runs one reconcile of ns/pool over a fake client holding
// objs, and returns the client.
func reconcileOnce(t *testing.T, recorder record.EventRecorder, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, workerset.AddToScheme(scheme))
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&workerset.WorkerSet{}).
		WithIndex(&workerset.Worker{}, childsetcr.ControllerField, childsetcr.IndexByController).Build()
	core, err := childsetcr.NewCore(c, nil, recorder, workerset.SetAdapter{}, workerset.WorkerAdapter{})
	require.NoError(t, err)
	res, err := childsetcr.NewReconciler(core).Reconcile(context.Background(),
		reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "pool"}})
	require.NoError(t, err)
	assert.Zero(t, res)
	return c
}

func workers(t *testing.T, c client.Client) map[string]workerset.Worker {
	t.Helper()
	list := &workerset.WorkerList{}
	require.NoError(t, c.List(context.Background(), list, client.InNamespace("ns")))
	out := map[string]workerset.Worker{}
	for _, w := range list.Items {
		out[w.Name] = w
	}
	return out
}

// Replicas 3 on an empty namespace: three Workers made from the template,
// controlled by the set.
func TestWorkerSetCreates(t *testing.T) {
	set := newSet(3)
	got := workers(t, reconcileOnce(t, nil, set))
	require.Len(t, got, 3)
	for name, w := range got {
		ctrl := metav1.GetControllerOf(&w)
		require.NotNil(t, ctrl, name)
		assert.Equal(t, set.UID, ctrl.UID)
		assert.Equal(t, "WorkerSet", ctrl.Kind)
		assert.Equal(t, workerset.GroupVersion.String(), ctrl.APIVersion)
		assert.Equal(t, "a", w.Labels["pool"])
		assert.Equal(t, "x", w.Annotations["note"])
		assert.Equal(t, workerset.WorkerSpec{MachineClass: "m5.large", Image: "worker:1"}, w.Spec)
		assert.Contains(t, name, "pool-", "generated from the set's name")
	}
}

// A scale-down deletes the Workers that are not ready first.
func TestWorkerSetScaleDownDeletesUnreadyFirst(t *testing.T) {
	set := newSet(2)
	got := workers(t, reconcileOnce(t, nil, set,
		worker("w1", true, set), worker("w2", false, set), worker("w3", true, set)))
	assert.Len(t, got, 2)
	assert.NotContains(t, got, "w2")
}

// A matching orphan is adopted (through a JSON merge patch: Workers are a
// custom resource) and counts toward the replicas.
func TestWorkerSetAdoptsOrphan(t *testing.T) {
	set := newSet(2)
	got := workers(t, reconcileOnce(t, nil, set, worker("orphan", true, nil)))
	require.Len(t, got, 2)
	adopted := got["orphan"]
	ctrl := metav1.GetControllerOf(&adopted)
	require.NotNil(t, ctrl, "the orphan is adopted")
	assert.Equal(t, set.UID, ctrl.UID)
}

// A set whose selector is missing is refused with an event and writes
// nothing.
func TestWorkerSetRefusesMissingSelector(t *testing.T) {
	set := newSet(2)
	set.Spec.Selector = nil
	recorder := record.NewFakeRecorder(10)
	got := workers(t, reconcileOnce(t, recorder, set))
	assert.Empty(t, got)
	require.Len(t, recorder.Events, 1)
	assert.Contains(t, <-recorder.Events, childset.ReasonSelectorMismatch)
}

// DeepCopy copies everything a reference could share.
func TestDeepCopy(t *testing.T) {
	set := newSet(1)
	cp := set.DeepCopyObject().(*workerset.WorkerSet)
	*cp.Spec.Replicas = 5
	cp.Spec.Selector.MatchLabels["pool"] = "b"
	cp.Spec.Template.Metadata.Labels["pool"] = "b"
	assert.Equal(t, int32(1), *set.Spec.Replicas)
	assert.Equal(t, "a", set.Spec.Selector.MatchLabels["pool"])
	assert.Equal(t, "a", set.Spec.Template.Metadata.Labels["pool"])

	w := worker("w", true, set)
	wc := w.DeepCopyObject().(*workerset.Worker)
	wc.Labels["pool"] = "b"
	wc.OwnerReferences[0].Name = "other"
	assert.Equal(t, "a", w.Labels["pool"])
	assert.Equal(t, "pool", w.OwnerReferences[0].Name)

	list := &workerset.WorkerList{Items: []workerset.Worker{*w}}
	lc := list.DeepCopyObject().(*workerset.WorkerList)
	lc.Items[0].Labels["pool"] = "c"
	assert.Equal(t, "a", list.Items[0].Labels["pool"])
	sets := &workerset.WorkerSetList{Items: []workerset.WorkerSet{*set}}
	sc := sets.DeepCopyObject().(*workerset.WorkerSetList)
	sc.Items[0].Spec.Template.Metadata.Annotations["note"] = "y"
	assert.Equal(t, "x", set.Spec.Template.Metadata.Annotations["note"])

	var nilSet *workerset.WorkerSet
	assert.Nil(t, nilSet.DeepCopyObject())
}
