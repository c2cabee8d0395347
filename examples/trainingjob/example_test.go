package trainingjob

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/podcontrol"
	"github.com/ctrlkit/ctrlkit/workqueue"
)

// A sync creates one worker pod; the job waits until the pod informer's add
// handler observes it, and is then enqueued again.
func ExampleJobController_createNewPod() {
	pods := &podcontrol.FakePodControl{} // podcontrol.NewRealPodControl(client, recorder) in a controller
	queue := workqueue.NewRateLimiting[string](nil)
	defer queue.ShutDown()
	jc := &JobController{
		GVK:          jobGVK,
		Expectations: expectations.NewControllerExpectations(),
		PodControl:   pods,
		WorkQueue:    queue,
	}

	job := &unstructured.Unstructured{}
	job.SetGroupVersionKind(jobGVK)
	job.SetNamespace("ml")
	job.SetName("mnist")
	job.SetUID("6f1c")

	// The sync resets each replica type's record before it creates pods.
	key, err := expectations.OwnerScopeKeyFor(job, podsScope("Worker"))
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = jc.Expectations.SetExpectations(key, 0, 0)

	template := &v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{
		Name:   "mnist-worker-0",
		Labels: map[string]string{replicaTypeLabel: "worker"},
	}}
	if err := jc.createNewPod(context.Background(), job, job, "Worker", template); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("key:", key)
	fmt.Println("created:", pods.Templates[0].Name, "owned by", pods.ControllerRefs[0].Kind, pods.ControllerRefs[0].Name)
	fmt.Println("satisfied before the informer sees it:", jc.Expectations.SatisfiedExpectations(key))

	// The pod informer delivers the new pod.
	jc.AddPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace:       "ml",
		Name:            pods.Templates[0].Name,
		Labels:          pods.Templates[0].Labels,
		OwnerReferences: []metav1.OwnerReference{pods.ControllerRefs[0]},
	}})
	item, _ := queue.Get()
	queue.Done(item)
	fmt.Println("satisfied after AddPod:", jc.Expectations.SatisfiedExpectations(key))
	fmt.Println("enqueued:", item)

	// Output:
	// key: ml/mnist#worker-pods@6f1c
	// created: mnist-worker-0 owned by PyTorchJob mnist
	// satisfied before the informer sees it: false
	// satisfied after AddPod: true
	// enqueued: ml/mnist
}
