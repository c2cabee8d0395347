package podset

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ctrlkit/ctrlkit/internal/writedeadline"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// deadlinePodControl runs every call of a PodControl within the write
// timeout, by internal/writedeadline's rule, which childset follows too.
type deadlinePodControl struct {
	pc      podcontrol.PodControl
	timeout time.Duration
}

var _ podcontrol.PodControl = deadlinePodControl{}

// bounded runs one write within the timeout.
func (d deadlinePodControl) bounded(ctx context.Context, what string, write func(context.Context) error) error {
	return writedeadline.Do(ctx, d.timeout, what, write)
}

func (d deadlinePodControl) CreatePods(ctx context.Context, namespace string, template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference) error {
	return d.bounded(ctx, "creating a pod in "+namespace, func(ctx context.Context) error {
		return d.pc.CreatePods(ctx, namespace, template, object, controllerRef)
	})
}

func (d deadlinePodControl) CreatePodsWithGenerateName(ctx context.Context, namespace string, template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference, generateName string) error {
	return d.bounded(ctx, "creating a pod in "+namespace, func(ctx context.Context) error {
		return d.pc.CreatePodsWithGenerateName(ctx, namespace, template, object, controllerRef, generateName)
	})
}

func (d deadlinePodControl) DeletePod(ctx context.Context, namespace, podID string, object runtime.Object) error {
	return d.deleteAll(ctx, namespace, []string{podID}, object)[0]
}

// deleteAll deletes the named pods of namespace in parallel, one goroutine
// per pod as upstream deletes them, and returns each delete's error in the
// order of names. The deletes share one deadline, the timeout from the
// moment they all start (writedeadline.Each); a delete still unanswered then
// gets a deadline error and is abandoned.
func (d deadlinePodControl) deleteAll(ctx context.Context, namespace string, names []string, object runtime.Object) []error {
	return writedeadline.Each(ctx, d.timeout, len(names),
		func(i int) string { return "deleting pod " + namespace + "/" + names[i] },
		func(ctx context.Context, i int) error { return d.pc.DeletePod(ctx, namespace, names[i], object) })
}

func (d deadlinePodControl) PatchPod(ctx context.Context, namespace, name string, data []byte) error {
	return d.bounded(ctx, "patching pod "+namespace+"/"+name, func(ctx context.Context) error {
		return d.pc.PatchPod(ctx, namespace, name, data)
	})
}

// namePrefix is the generateName of the pods created from template for
// object when the pod control can create by name
// (podcontrol.NamedPodCreator), and "" otherwise.
func (d deadlinePodControl) namePrefix(template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference) string {
	if _, ok := d.pc.(podcontrol.NamedPodCreator); !ok {
		return ""
	}
	pod, err := podcontrol.GetPodFromTemplate(template, object, controllerRef)
	if err != nil {
		// CreatePods refuses the same input with this error.
		return ""
	}
	return pod.GenerateName
}

// createPod creates a pod from template called name, or, with no name,
// one the pod control names. A name chosen here (see namePrefix and
// unsure.Namer) lets a create of unknown outcome be sent again without
// creating a second pod (see resolveUnknown).
func (d deadlinePodControl) createPod(ctx context.Context, namespace, name string, template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference) error {
	if name == "" {
		return d.CreatePods(ctx, namespace, template, object, controllerRef)
	}
	return d.createPodNamed(ctx, namespace, name, template, object, controllerRef)
}

// createPodNamed creates the pod called name; the pod control must be a
// podcontrol.NamedPodCreator.
func (d deadlinePodControl) createPodNamed(ctx context.Context, namespace, name string, template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference) error {
	named, ok := d.pc.(podcontrol.NamedPodCreator)
	if !ok {
		return fmt.Errorf("%w: the pod control cannot create pod %s/%s by name", objectcontrol.ErrNotSent, namespace, name)
	}
	return d.bounded(ctx, "creating pod "+namespace+"/"+name, func(ctx context.Context) error {
		return named.CreatePodWithName(ctx, namespace, name, template, object, controllerRef)
	})
}
