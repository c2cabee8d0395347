package podcontrol

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
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

// RealPodControl is the client-go PodControl. It records events with
// upstream's reasons and messages unless configured otherwise.
type RealPodControl struct {
	client       kubernetes.Interface
	recorder     record.EventRecorder
	reasons      EventReasons
	onWrite      func(*v1.Pod, *metav1.OwnerReference)
	notFoundIsOK bool
}

var (
	_ PodControl      = (*RealPodControl)(nil)
	_ NamedPodCreator = (*RealPodControl)(nil)
)

// NewRealPodControl returns a PodControl writing through client and
// recording events through recorder; a nil recorder records nothing.
func NewRealPodControl(client kubernetes.Interface, recorder record.EventRecorder, opts ...Option) *RealPodControl {
	cfg := config{reasons: DefaultEventReasons()}
	for _, opt := range opts {
		opt(&cfg)
	}
	return &RealPodControl{client: client, recorder: recorder, reasons: cfg.reasons, onWrite: cfg.onWrite, notFoundIsOK: cfg.notFoundIsOK}
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
	return r.create(ctx, namespace, pod, object, controllerRef)
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
	return r.create(ctx, namespace, pod, object, controllerRef)
}

// podToCreate builds and checks the pod a create sends.
func podToCreate(template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference) (*v1.Pod, error) {
	if err := ValidateControllerRef(controllerRef); err != nil {
		return nil, err
	}
	pod, err := GetPodFromTemplate(template, object, controllerRef)
	if err != nil {
		return nil, err
	}
	if len(pod.Labels) == 0 {
		return nil, ErrNoLabels
	}
	return pod, nil
}

func (r *RealPodControl) create(ctx context.Context, namespace string, pod *v1.Pod, object runtime.Object, controllerRef *metav1.OwnerReference) error {
	created, err := r.client.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		// A terminating namespace refuses every create; an event per attempt
		// would only be noise.
		if !apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
			r.event(object, v1.EventTypeWarning, r.reasons.FailedCreate, "Error creating: %v", err)
		}
		return err
	}
	if r.onWrite != nil {
		r.onWrite(created, controllerRef)
	}
	klog.FromContext(ctx).V(4).Info("Controller created pod", "controller", nameOf(object), "pod", klog.KObj(created))
	r.event(object, v1.EventTypeNormal, r.reasons.SuccessfulCreate, "Created pod: %v", created.Name)
	return nil
}

// DeletePod implements PodControl. NotFound records no event and, as
// upstream, is returned unchanged, so the caller can tell that someone else
// deleted the pod; with WithNotFoundAsSuccess it is nil instead. Other
// errors record FailedDelete and are wrapped.
func (r *RealPodControl) DeletePod(ctx context.Context, namespace, podID string, object runtime.Object) error {
	accessor, err := meta.Accessor(object)
	if err != nil {
		return fmt.Errorf("object does not have ObjectMeta, %w", err)
	}
	logger := klog.FromContext(ctx)
	logger.V(2).Info("Deleting pod", "controller", accessor.GetName(), "pod", klog.KRef(namespace, podID))
	if err := r.client.CoreV1().Pods(namespace).Delete(ctx, podID, metav1.DeleteOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			logger.V(4).Info("Pod has already been deleted", "pod", klog.KRef(namespace, podID))
			if r.notFoundIsOK {
				return nil
			}
			return err
		}
		r.event(object, v1.EventTypeWarning, r.reasons.FailedDelete, "Error deleting: %v", err)
		return fmt.Errorf("unable to delete pods: %w", err)
	}
	r.event(object, v1.EventTypeNormal, r.reasons.SuccessfulDelete, "Deleted pod: %v", podID)
	return nil
}

// PatchPod implements PodControl with a strategic-merge patch.
func (r *RealPodControl) PatchPod(ctx context.Context, namespace, name string, data []byte) error {
	pod, err := r.client.CoreV1().Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
	if err != nil {
		return err
	}
	if r.onWrite != nil {
		r.onWrite(pod, metav1.GetControllerOfNoCopy(pod))
	}
	return nil
}

func (r *RealPodControl) event(object runtime.Object, eventType, reason, format string, args ...any) {
	if r.recorder == nil {
		return
	}
	r.recorder.Eventf(object, eventType, reason, format, args...)
}

func nameOf(object runtime.Object) string {
	if accessor, err := meta.Accessor(object); err == nil {
		return accessor.GetName()
	}
	return ""
}
