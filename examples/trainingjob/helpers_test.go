package trainingjob

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/podcontrol"
	"github.com/ctrlkit/ctrlkit/workqueue"
)

var jobGVK = schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"}

// The scopes the tests expect createNewPod and AddPod to use, built
// independently of podsScope.
var (
	workerPods = expectations.MustScope("worker-pods")
	psPods     = expectations.MustScope("ps-pods")
)

// newJob returns the PyTorchJob ml/mnist with the given UID.
func newJob(uid types.UID) *unstructured.Unstructured {
	job := &unstructured.Unstructured{}
	job.SetGroupVersionKind(jobGVK)
	job.SetNamespace("ml")
	job.SetName("mnist")
	job.SetUID(uid)
	return job
}

// newController returns a JobController on a fake pod control and a real
// expectations cache and queue; the queue is shut down when the test ends.
func newController(t *testing.T, opts ...expectations.Option) (*JobController, *podcontrol.FakePodControl, *workqueue.RateLimitingQueue[string]) {
	t.Helper()
	fake := &podcontrol.FakePodControl{}
	queue := workqueue.NewRateLimiting[string](nil)
	t.Cleanup(queue.ShutDown)
	jc := &JobController{
		GVK:          jobGVK,
		Expectations: expectations.NewControllerExpectations(opts...),
		PodControl:   fake,
		WorkQueue:    queue,
	}
	return jc, fake, queue
}

// podTemplate is the template training-operator builds for one replica: the
// pod's name on the template, the replica type as a lower-case label.
func podTemplate(name, replicaType string) *v1.PodTemplateSpec {
	return &v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{replicaTypeLabel: replicaType}},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "pytorch", Image: "pytorch"}}},
	}
}

// createdPod is the pod the informer delivers after the fake's i-th create.
func createdPod(t *testing.T, fake *podcontrol.FakePodControl, i int) *v1.Pod {
	t.Helper()
	fake.Lock()
	defer fake.Unlock()
	if i >= len(fake.Templates) {
		t.Fatalf("create %d not recorded; %d creates", i, len(fake.Templates))
	}
	tmpl := fake.Templates[i]
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       fake.CreateNamespaces[i],
			Name:            tmpl.Name,
			Labels:          tmpl.Labels,
			OwnerReferences: []metav1.OwnerReference{fake.ControllerRefs[i]},
		},
		Spec: tmpl.Spec,
	}
}

// adds returns the pending creations of key's record, and false when there
// is no record.
func adds(t *testing.T, jc *JobController, key string) (int64, bool) {
	t.Helper()
	rec, ok, err := jc.Expectations.GetExpectations(key)
	if err != nil {
		t.Fatalf("GetExpectations(%q): %v", key, err)
	}
	if !ok {
		return 0, false
	}
	add, _ := rec.GetExpectations()
	return add, true
}

// drain returns the items in the queue, marking each done.
func drain(queue *workqueue.RateLimitingQueue[string]) []string {
	var items []string
	for queue.Len() > 0 {
		item, _ := queue.Get()
		items = append(items, item)
		queue.Done(item)
	}
	return items
}
