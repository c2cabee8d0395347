package podcontrol

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// PodControl is how controllers write pods. object is the controller the
// action is done for; events are recorded against it.
type PodControl interface {
	// CreatePods creates a pod from template in namespace, owned through
	// controllerRef, with the generateName "<owner name>-".
	CreatePods(ctx context.Context, namespace string, template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference) error
	// CreatePodsWithGenerateName is CreatePods with generateName overriding
	// the default prefix when not empty.
	CreatePodsWithGenerateName(ctx context.Context, namespace string, template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference, generateName string) error
	// DeletePod deletes the named pod.
	DeletePod(ctx context.Context, namespace, podID string, object runtime.Object) error
	// PatchPod sends a strategic-merge patch to the named pod.
	PatchPod(ctx context.Context, namespace, name string, data []byte) error
}

// NamedPodCreator creates a pod with a name the controller chose, for
// controllers that name their pods by index or role (StatefulSet-, Job- or
// JobSet-like). RealPodControl and FakePodControl implement it.
type NamedPodCreator interface {
	CreatePodWithName(ctx context.Context, namespace, name string, template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference) error
}

// PodWriter is the narrow writer RealPodControl sends pods through: create,
// delete and patch, and nothing else. ClientsetWriter is the client-go one;
// package ctrlruntime/crclient has one over a controller-runtime client.
type PodWriter = objectcontrol.Writer[*v1.Pod]

// ClientsetWriter returns the PodWriter over client's typed pod client.
func ClientsetWriter(client kubernetes.Interface) PodWriter {
	return objectcontrol.TypedWriter(func(namespace string) objectcontrol.TypedClient[*v1.Pod] {
		return client.CoreV1().Pods(namespace)
	})
}

// RealPodControl is the PodControl over a PodWriter. It builds and checks
// the pod, and leaves events (upstream's reasons and messages unless
// configured otherwise), NotFound handling, the write hook and the deadline
// to an objectcontrol.Control, so every writer follows the same rules.
type RealPodControl struct {
	pods *objectcontrol.Control[*v1.Pod]
}

var (
	_ PodControl      = (*RealPodControl)(nil)
	_ NamedPodCreator = (*RealPodControl)(nil)
)

// NewRealPodControl returns a PodControl writing through client and
// recording events through recorder; a nil recorder records nothing.
func NewRealPodControl(client kubernetes.Interface, recorder record.EventRecorder, opts ...Option) *RealPodControl {
	return NewPodControl(ClientsetWriter(client), recorder, opts...)
}

// NewPodControl returns a PodControl writing through writer and recording
// events through recorder; a nil recorder records nothing. A nil writer
// panics.
func NewPodControl(writer PodWriter, recorder record.EventRecorder, opts ...Option) *RealPodControl {
	return &RealPodControl{pods: objectcontrol.New("pod", writer, recorder, types.StrategicMergePatchType, opts...)}
}

// CreatePods implements PodControl.
func (r *RealPodControl) CreatePods(ctx context.Context, namespace string, template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference) error {
	return r.CreatePodsWithGenerateName(ctx, namespace, template, object, controllerRef, "")
}

// CreatePodsWithGenerateName implements PodControl. The controller reference
// and template are checked first (see ValidateControllerRef and
// GetPodFromTemplate); a template without labels is refused with ErrNoLabels,
// since the controller could never select the pod it created.
func (r *RealPodControl) CreatePodsWithGenerateName(ctx context.Context, namespace string, template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference, generateName string) error {
	pod, err := podToCreate(template, object, controllerRef)
	if err != nil {
		return err
	}
	if generateName != "" {
		pod.GenerateName = generateName
	}
	_, err = r.pods.Create(ctx, namespace, pod, object, controllerRef)
	return err
}

// CreatePodWithName implements NamedPodCreator: CreatePods with a fixed
// name instead of a generated one. An existing pod of that name fails the
// create with AlreadyExists, which apierrors.IsAlreadyExists recognises.
func (r *RealPodControl) CreatePodWithName(ctx context.Context, namespace, name string, template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference) error {
	pod, err := podToCreate(template, object, controllerRef)
	if err != nil {
		return err
	}
	pod.Name, pod.GenerateName = name, ""
	_, err = r.pods.Create(ctx, namespace, pod, object, controllerRef)
	return err
}

// podToCreate builds and checks the pod a create sends.
// Its errors match objectcontrol.ErrNotSent: nothing reached the API
// server.
func podToCreate(template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference) (*v1.Pod, error) {
	if err := ValidateControllerRef(controllerRef); err != nil {
		return nil, fmt.Errorf("%w: %w", objectcontrol.ErrNotSent, err)
	}
	pod, err := GetPodFromTemplate(template, object, controllerRef)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", objectcontrol.ErrNotSent, err)
	}
	if len(pod.Labels) == 0 {
		return nil, fmt.Errorf("%w: %w", objectcontrol.ErrNotSent, ErrNoLabels)
	}
	return pod, nil
}

// DeletePod implements PodControl. NotFound records no event and, as
// upstream, is returned unchanged, so the caller can tell that someone else
// deleted the pod; with WithNotFoundAsSuccess it is nil instead. Other
// errors record FailedDelete and are wrapped.
func (r *RealPodControl) DeletePod(ctx context.Context, namespace, podID string, object runtime.Object) error {
	return r.pods.Delete(ctx, namespace, podID, object)
}

// PatchPod implements PodControl with a strategic-merge patch.
func (r *RealPodControl) PatchPod(ctx context.Context, namespace, name string, data []byte) error {
	return r.pods.Patch(ctx, namespace, name, data)
}
