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
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// TypedClient is the part of a client-go typed client for one namespace
// (corev1client.ServiceInterface, corev1client.PersistentVolumeClaimInterface,
// a generated client for a custom resource, ...) that an ObjectControl
// writes through.
type TypedClient[T runtime.Object] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
}

// ObjectControl writes objects of one kind T that a controller owns, as
// PodControl does for pods. owner is the controller the action is done for;
// events are recorded against it.
type ObjectControl[T metav1.Object] interface {
	// Create creates obj in namespace with controllerRef as its only owner
	// reference, and returns what the API server stored.
	Create(ctx context.Context, namespace string, obj T, owner runtime.Object, controllerRef *metav1.OwnerReference) (T, error)
	// Delete deletes the named object.
	Delete(ctx context.Context, namespace, name string, owner runtime.Object) error
	// Patch sends data to the named object with the control's patch type
	// (strategic merge by default). With PatchType it makes a control a
	// claim.Patcher, so the generic ref manager can adopt and release
	// objects of this kind.
	Patch(ctx context.Context, namespace, name string, data []byte) error
}

// RealObjectControl is the client-go ObjectControl, recording events with
// the same reasons and messages as RealPodControl.
type RealObjectControl[T interface {
	metav1.Object
	runtime.Object
}] struct {
	clientFor func(namespace string) TypedClient[T]
	recorder  record.EventRecorder
	kind      string
	patchType types.PatchType
	reasons   EventReasons
	notFound  bool
}

// NewObjectControl returns an ObjectControl for kind (a name for messages,
// such as "Service") writing through clientFor(namespace), for example
//
//	func(ns string) podcontrol.TypedClient[*v1.Service] { return client.CoreV1().Services(ns) }
//
// A nil recorder records nothing. patchType is what Patch sends:
// types.StrategicMergePatchType for built-in kinds, types.MergePatchType for
// custom resources.
func NewObjectControl[T interface {
	metav1.Object
	runtime.Object
}](kind string, clientFor func(namespace string) TypedClient[T], recorder record.EventRecorder, patchType types.PatchType, opts ...Option) *RealObjectControl[T] {
	cfg := config{reasons: DefaultEventReasons()}
	for _, opt := range opts {
		opt(&cfg)
	}
	return &RealObjectControl[T]{clientFor: clientFor, recorder: recorder, kind: kind, patchType: patchType,
		reasons: cfg.reasons, notFound: cfg.notFoundIsOK}
}

// Create implements ObjectControl. obj is not modified; a copy carrying
// controllerRef (checked with ValidateControllerRef) is sent.
func (c *RealObjectControl[T]) Create(ctx context.Context, namespace string, obj T, owner runtime.Object, controllerRef *metav1.OwnerReference) (T, error) {
	var zero T
	if err := ValidateControllerRef(controllerRef); err != nil {
		return zero, err
	}
	toSend := obj.DeepCopyObject().(T)
	toSend.SetOwnerReferences([]metav1.OwnerReference{*controllerRef.DeepCopy()})
	created, err := c.clientFor(namespace).Create(ctx, toSend, metav1.CreateOptions{})
	if err != nil {
		if !apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
			c.event(owner, v1.EventTypeWarning, c.reasons.FailedCreate, "Error creating: %v", err)
		}
		return zero, err
	}
	klog.FromContext(ctx).V(4).Info("Controller created object", "kind", c.kind, "controller", nameOf(owner), "object", klog.KObj(created))
	c.event(owner, v1.EventTypeNormal, c.reasons.SuccessfulCreate, "Created %s: %v", c.kind, created.GetName())
	return created, nil
}

// Delete implements ObjectControl with RealPodControl.DeletePod's rules:
// NotFound records no event and is returned unless WithNotFoundAsSuccess,
// other errors record FailedDelete and are wrapped.
func (c *RealObjectControl[T]) Delete(ctx context.Context, namespace, name string, owner runtime.Object) error {
	if _, err := meta.Accessor(owner); err != nil {
		return fmt.Errorf("object does not have ObjectMeta, %w", err)
	}
	if err := c.clientFor(namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			if c.notFound {
				return nil
			}
			return err
		}
		c.event(owner, v1.EventTypeWarning, c.reasons.FailedDelete, "Error deleting: %v", err)
		return fmt.Errorf("unable to delete %s: %w", c.kind, err)
	}
	c.event(owner, v1.EventTypeNormal, c.reasons.SuccessfulDelete, "Deleted %s: %v", c.kind, name)
	return nil
}

// Patch implements ObjectControl.
func (c *RealObjectControl[T]) Patch(ctx context.Context, namespace, name string, data []byte) error {
	_, err := c.clientFor(namespace).Patch(ctx, name, c.patchType, data, metav1.PatchOptions{})
	return err
}

// PatchType reports the patch type Patch sends, so a claim ref manager
// builds the body it needs.
func (c *RealObjectControl[T]) PatchType() types.PatchType { return c.patchType }

func (c *RealObjectControl[T]) event(owner runtime.Object, eventType, reason, format string, args ...any) {
	if c.recorder == nil {
		return
	}
	c.recorder.Eventf(owner, eventType, reason, format, args...)
}
