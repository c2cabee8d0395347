package crclient

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// PodControl is podcontrol.PodControl over a controller-runtime client. It
// records the same events as podcontrol.RealPodControl (reasons and
// messages), so dashboards keep working when a controller moves over.
type PodControl struct {
	client   client.Client
	recorder record.EventRecorder
	onWrite  func(*corev1.Pod, *metav1.OwnerReference)
}

var _ podcontrol.PodControl = (*PodControl)(nil)

// Option configures NewPodControl.
type Option func(*PodControl)

// WithOnWrite registers a hook called with every pod the API server returns
// from a successful create or patch, and the controller reference involved,
// as podcontrol.WithOnWrite does for client-go's pod control. podset's
// RecordPodWrite is such a hook: it lets the read-your-writes guard wait
// for the informer to see the controller's own writes.
func WithOnWrite(fn func(pod *corev1.Pod, controllerRef *metav1.OwnerReference)) Option {
	return func(p *PodControl) { p.onWrite = fn }
}

// NewPodControl returns a PodControl writing through c and recording events
// through recorder; a nil recorder records nothing. c must not be nil.
func NewPodControl(c client.Client, recorder record.EventRecorder, opts ...Option) *PodControl {
	p := &PodControl{client: c, recorder: recorder}
	for _, o := range opts {
		if o != nil {
			o(p)
		}
	}
	return p
}

// CreatePods creates a pod from template in namespace, owned through
// controllerRef, named "<owner name>-<random suffix>".
func (p *PodControl) CreatePods(ctx context.Context, namespace string, template *corev1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference) error {
	return p.CreatePodsWithGenerateName(ctx, namespace, template, object, controllerRef, "")
}

// CreatePodsWithGenerateName is CreatePods with generateName as the name
// prefix when not empty. The controller reference and template are checked
// as podcontrol.RealPodControl checks them; a template without labels is
// refused with podcontrol.ErrNoLabels.
func (p *PodControl) CreatePodsWithGenerateName(ctx context.Context, namespace string, template *corev1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference, generateName string) error {
	if err := podcontrol.ValidateControllerRef(controllerRef); err != nil {
		return err
	}
	pod, err := podcontrol.GetPodFromTemplate(template, object, controllerRef)
	if err != nil {
		return err
	}
	pod.Namespace = namespace
	if generateName != "" {
		pod.GenerateName = generateName
	}
	if len(pod.Labels) == 0 {
		return podcontrol.ErrNoLabels
	}
	if err := p.client.Create(ctx, pod); err != nil {
		// A terminating namespace refuses every create; an event per attempt
		// would only be noise.
		if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			p.event(object, corev1.EventTypeWarning, podcontrol.FailedCreatePodReason, "Error creating: %v", err)
		}
		return err
	}
	// Create filled pod in with what the API server stored.
	if p.onWrite != nil {
		p.onWrite(pod, controllerRef)
	}
	klog.FromContext(ctx).V(4).Info("Controller created pod", "controller", nameOf(object), "pod", klog.KObj(pod))
	p.event(object, corev1.EventTypeNormal, podcontrol.SuccessfulCreatePodReason, "Created pod: %v", pod.Name)
	return nil
}

// DeletePod deletes the named pod. NotFound is returned unchanged and
// records no event: the pod is gone, which is what the caller wanted.
func (p *PodControl) DeletePod(ctx context.Context, namespace, podID string, object runtime.Object) error {
	accessor, err := meta.Accessor(object)
	if err != nil {
		return fmt.Errorf("object does not have ObjectMeta, %w", err)
	}
	logger := klog.FromContext(ctx)
	logger.V(2).Info("Deleting pod", "controller", accessor.GetName(), "pod", klog.KRef(namespace, podID))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: podID}}
	if err := p.client.Delete(ctx, pod); err != nil {
		if apierrors.IsNotFound(err) {
			logger.V(4).Info("Pod has already been deleted", "pod", klog.KRef(namespace, podID))
			return err
		}
		p.event(object, corev1.EventTypeWarning, podcontrol.FailedDeletePodReason, "Error deleting: %v", err)
		return fmt.Errorf("unable to delete pods: %w", err)
	}
	p.event(object, corev1.EventTypeNormal, podcontrol.SuccessfulDeletePodReason, "Deleted pod: %v", podID)
	return nil
}

// PatchPod sends a strategic-merge patch to the named pod; it is what
// claim's pod ref manager calls to adopt and release.
func (p *PodControl) PatchPod(ctx context.Context, namespace, name string, data []byte) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := p.client.Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType, data)); err != nil {
		return err
	}
	// Patch filled pod in with the patched pod.
	if p.onWrite != nil {
		p.onWrite(pod, metav1.GetControllerOfNoCopy(pod))
	}
	return nil
}

func (p *PodControl) event(object runtime.Object, eventType, reason, format string, args ...any) {
	// An event needs an object to be attached to.
	if p.recorder == nil || object == nil {
		return
	}
	p.recorder.Eventf(object, eventType, reason, format, args...)
}

func nameOf(object runtime.Object) string {
	if object == nil {
		return ""
	}
	if accessor, err := meta.Accessor(object); err == nil {
		return accessor.GetName()
	}
	return ""
}
