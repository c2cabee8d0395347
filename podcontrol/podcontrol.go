package podcontrol

import (
	"context"
	"errors"
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

// Event reasons recorded by RealPodControl, the same strings as upstream so
// dashboards and alerts keep working.
const (
	FailedCreatePodReason     = "FailedCreate"
	SuccessfulCreatePodReason = "SuccessfulCreate"
	FailedDeletePodReason     = "FailedDelete"
	SuccessfulDeletePodReason = "SuccessfulDelete"
)

// PodControl is how ref managers and controllers write pods. object is the
// controller the action is done for; events are recorded against it.
type PodControl interface {
	// CreatePods creates a pod from template in namespace, owned through
	// controllerRef, with the generateName "<owner name>-".
	CreatePods(ctx context.Context, namespace string, template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference) error
	// CreatePodsWithGenerateName is CreatePods with generateName overriding
	// the default prefix when not empty.
	CreatePodsWithGenerateName(ctx context.Context, namespace string, template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference, generateName string) error
	// DeletePod deletes the named pod. A NotFound error is returned as is,
	// so callers can treat it as done.
	DeletePod(ctx context.Context, namespace, podID string, object runtime.Object) error
	// PatchPod sends a strategic-merge patch to the named pod.
	PatchPod(ctx context.Context, namespace, name string, data []byte) error
}

// PodControlOption configures NewRealPodControl.
type PodControlOption func(*RealPodControl)

// WithOnWrite registers a hook called with every pod the API server returns
// from a successful create or patch, and the controller reference involved.
// Upstream uses it (v1.36) to feed a read-your-writes consistency store, so
// the next sync waits for the informer to catch up with its own writes.
func WithOnWrite(fn func(pod *v1.Pod, controllerRef *metav1.OwnerReference)) PodControlOption {
	return func(r *RealPodControl) { r.onWrite = fn }
}

// RealPodControl is the client-go PodControl. It records events with the
// upstream reasons and messages.
type RealPodControl struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	onWrite  func(*v1.Pod, *metav1.OwnerReference)
}

var _ PodControl = (*RealPodControl)(nil)

// errNilClient is returned by every RealPodControl call when it has no client.
var errNilClient = errors.New("claim: pod control has a nil client")

// NewRealPodControl returns a PodControl writing through client and
// recording events through recorder. A nil recorder records nothing.
func NewRealPodControl(client kubernetes.Interface, recorder record.EventRecorder, opts ...PodControlOption) PodControl {
	r := &RealPodControl{client: client, recorder: recorder}
	if isNil(r.client) {
		r.client = nil
	}
	if isNil(r.recorder) {
		r.recorder = nil
	}
	for _, opt := range opts {
		if opt != nil {
			opt(r)
		}
	}
	return r
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
	if err := ValidateControllerRef(controllerRef); err != nil {
		return err
	}
	pod, err := GetPodFromTemplate(template, object, controllerRef)
	if err != nil {
		return err
	}
	if generateName != "" {
		pod.GenerateName = generateName
	}
	if len(pod.Labels) == 0 {
		return ErrNoLabels
	}
	if r.client == nil {
		return errNilClient
	}
	created, err := r.client.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		// A terminating namespace refuses every create; an event per attempt
		// would only be noise.
		if !apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
			r.event(object, v1.EventTypeWarning, FailedCreatePodReason, "Error creating: %v", err)
		}
		return err
	}
	if r.onWrite != nil {
		r.onWrite(created, controllerRef)
	}
	klog.FromContext(ctx).V(4).Info("Controller created pod", "controller", nameOf(object), "pod", klog.KObj(created))
	r.event(object, v1.EventTypeNormal, SuccessfulCreatePodReason, "Created pod: %v", created.Name)
	return nil
}

// DeletePod implements PodControl. NotFound is returned unchanged and records
// no event: the pod is already gone, which is what the caller wanted. Other
// errors record FailedDelete and are wrapped.
func (r *RealPodControl) DeletePod(ctx context.Context, namespace, podID string, object runtime.Object) error {
	accessor, err := meta.Accessor(object)
	if err != nil {
		return fmt.Errorf("object does not have ObjectMeta, %w", err)
	}
	if r.client == nil {
		return errNilClient
	}
	logger := klog.FromContext(ctx)
	logger.V(2).Info("Deleting pod", "controller", accessor.GetName(), "pod", klog.KRef(namespace, podID))
	if err := r.client.CoreV1().Pods(namespace).Delete(ctx, podID, metav1.DeleteOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			logger.V(4).Info("Pod has already been deleted", "pod", klog.KRef(namespace, podID))
			return err
		}
		r.event(object, v1.EventTypeWarning, FailedDeletePodReason, "Error deleting: %v", err)
		return fmt.Errorf("unable to delete pods: %w", err)
	}
	r.event(object, v1.EventTypeNormal, SuccessfulDeletePodReason, "Deleted pod: %v", podID)
	return nil
}

// PatchPod implements PodControl with a strategic-merge patch.
func (r *RealPodControl) PatchPod(ctx context.Context, namespace, name string, data []byte) error {
	if r.client == nil {
		return errNilClient
	}
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
	// An event needs an object to be attached to.
	if r.recorder == nil || isNil(object) {
		return
	}
	r.recorder.Eventf(object, eventType, reason, format, args...)
}

func nameOf(object runtime.Object) string {
	if isNil(object) {
		return ""
	}
	if accessor, err := meta.Accessor(object); err == nil {
		return accessor.GetName()
	}
	return ""
}
