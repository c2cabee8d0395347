package trainingjob

import (
	"context"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/podcontrol"
	"github.com/ctrlkit/ctrlkit/workqueue"
)

// replicaTypeLabel is the pod label that names the pod's replica type.
const replicaTypeLabel = "training.kubeflow.org/replica-type"

// podWriter creates pods by name; podcontrol.RealPodControl and
// podcontrol.FakePodControl both implement it.
type podWriter interface {
	podcontrol.PodControl
	podcontrol.NamedPodCreator
}

// JobController holds what createNewPod and AddPod use of a training job
// controller.
type JobController struct {
	GVK          schema.GroupVersionKind
	Expectations *expectations.ControllerExpectations // expectations.NewControllerExpectations(expectations.WithLogger(l))
	PodControl   podWriter                            // podcontrol.NewRealPodControl(client, recorder)
	WorkQueue    workqueue.RateLimitingInterface[string]
}

// podsScope is the expectations scope of one replica type's pods. Each
// scope of a job is its own record, "namespace/job#worker-pods@uid": the key
// carries the job's UID, so a job deleted and re-created under the same name
// starts with a clean record. Replica types come from the job's spec and the
// pod's label, which is data, so the keys are built with OwnerScopeKeyFor
// and OwnerScopeKeyForRef, which refuse a scope that cannot be part of a key.
func podsScope(replicaType string) string {
	return strings.ToLower(replicaType) + "-pods"
}

func (jc *JobController) createNewPod(ctx context.Context, job metav1.Object, obj runtime.Object,
	replicaType string, template *v1.PodTemplateSpec) error {
	key, err := expectations.OwnerScopeKeyFor(job, podsScope(replicaType))
	if err != nil {
		return err // a replica type with '/', '#' or '@' in it
	}
	jc.Expectations.RaiseExpectations(key, 1, 0)

	ref := metav1.NewControllerRef(job, jc.GVK)
	err = jc.PodControl.CreatePodWithName(ctx, job.GetNamespace(), template.Name, template, obj, ref)
	switch {
	case apierrors.IsTimeout(err):
		return nil // the informer observes the pod, or the record expires
	case err != nil:
		jc.Expectations.CreationObserved(key) // this creation will never be observed
		return err
	}
	return nil
}

// AddPod is the pod informer's add handler.
func (jc *JobController) AddPod(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod.DeletionTimestamp != nil {
		return
	}
	ref := metav1.GetControllerOf(pod)
	replicaType, labelled := pod.Labels[replicaTypeLabel]
	if ref == nil || ref.Kind != jc.GVK.Kind || !labelled {
		return
	}
	// The controller reference names the job and its UID: no lookup is needed
	// to build the key, and a record for another incarnation is never touched.
	key, err := expectations.OwnerScopeKeyForRef(pod.Namespace, ref, podsScope(replicaType))
	if err != nil {
		return // a label no sync of this controller wrote
	}
	jc.Expectations.CreationObserved(key)
	jc.WorkQueue.Add(pod.Namespace + "/" + ref.Name)
}
