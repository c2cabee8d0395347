package podset

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/objectcontrol"
	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// podControlWriter writes the core's pods through a PodControl
// (WithPodControl). The core names the pods it creates, so that a create
// of unknown outcome can be asked about again by name: only a pod control
// that creates by name (podcontrol.NamedPodCreator) can serve. A pod
// control does not return what it stored, so its writes reach no
// read-your-writes guard.
type podControlWriter struct {
	pc    podcontrol.PodControl
	named podcontrol.NamedPodCreator
}

var _ objectcontrol.Interface[*v1.Pod] = podControlWriter{}

// errUnnamedPodControl refuses a WithPodControl that cannot create by name.
var errUnnamedPodControl = errors.New("podset: WithPodControl: the pod control cannot create a pod by name (podcontrol.NamedPodCreator)")

func newPodControlWriter(pc podcontrol.PodControl) (podControlWriter, error) {
	named, ok := pc.(podcontrol.NamedPodCreator)
	if !ok {
		return podControlWriter{}, errUnnamedPodControl
	}
	return podControlWriter{pc: pc, named: named}, nil
}

func (w podControlWriter) Create(ctx context.Context, namespace string, pod *v1.Pod, owner runtime.Object, ref *metav1.OwnerReference) (*v1.Pod, error) {
	// The pod the core built from the template, as a template again.
	tmpl := &v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: pod.Labels, Annotations: pod.Annotations, Finalizers: pod.Finalizers},
		Spec:       pod.Spec,
	}
	if pod.Name == "" {
		return nil, w.pc.CreatePodsWithGenerateName(ctx, namespace, tmpl, owner, ref, pod.GenerateName)
	}
	return nil, w.named.CreatePodWithName(ctx, namespace, pod.Name, tmpl, owner, ref)
}

func (w podControlWriter) Delete(ctx context.Context, namespace, name string, owner runtime.Object) error {
	return w.pc.DeletePod(ctx, namespace, name, owner)
}

func (w podControlWriter) Patch(ctx context.Context, namespace, name string, data []byte) error {
	return w.pc.PatchPod(ctx, namespace, name, data)
}

// PatchType is the format of PodControl.PatchPod.
func (podControlWriter) PatchType() types.PatchType { return types.StrategicMergePatchType }
