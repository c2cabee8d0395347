package objectcontrol

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// Interface writes objects of one kind T that a controller owns. owner is
// the controller the action is done for; events are recorded against it.
type Interface[T metav1.Object] interface {
	// Create creates obj in namespace, with controllerRef as its only owner
	// reference when controllerRef is not nil, and returns what the API
	// server stored.
	Create(ctx context.Context, namespace string, obj T, owner runtime.Object, controllerRef *metav1.OwnerReference) (T, error)
	// Delete deletes the named object.
	Delete(ctx context.Context, namespace, name string, owner runtime.Object) error
	// Patch sends data to the named object with the control's patch type.
	// With PatchType it makes a control a claim.Patcher, so the generic ref
	// manager can adopt and release objects of this kind.
	Patch(ctx context.Context, namespace, name string, data []byte) error
}

// Control is the Interface over a Writer. It records events with
// upstream's pod-control reasons and messages unless configured otherwise,
// and bounds every write with a deadline.
type Control[T Object] struct {
	writer       Writer[T]
	recorder     record.EventRecorder
	kind         string
	patchType    types.PatchType
	reasons      EventReasons
	notFoundIsOK bool
	timeout      time.Duration
}

var _ Interface[*metav1.PartialObjectMetadata] = (*Control[*metav1.PartialObjectMetadata])(nil)

// New returns a Control for kind (a name for messages, such as "Service"
// or "pod") writing through writer. A nil recorder records nothing.
// patchType is what Patch sends: types.StrategicMergePatchType for built-in
// kinds, types.MergePatchType for custom resources. A nil writer panics.
// The set core learns of its own writes (for a read-your-writes guard)
// from what the control returns, rather than by hooking it.
func New[T Object](kind string, writer Writer[T], recorder record.EventRecorder, patchType types.PatchType, opts ...Option) *Control[T] {
	if writer == nil {
		panic("objectcontrol: New: nil writer")
	}
	cfg := newConfig(opts)
	return &Control[T]{writer: writer, recorder: recorder, kind: kind, patchType: patchType,
		reasons: cfg.reasons, notFoundIsOK: cfg.notFoundIsOK, timeout: cfg.timeout}
}

// Create implements Interface. obj is not modified: a copy is sent. A
// controllerRef that is not nil is checked with ValidateControllerRef and
// replaces the copy's owner references; a nil one sends the object with
// the owner references it has (none, for a Service or ConfigMap the
// controller does not own). A create refused because the namespace is
// terminating records no event: every create would fail the same way. A nil
// owner records no event; a nil pointer of a concrete type is refused with
// ErrNilOwner.
func (c *Control[T]) Create(ctx context.Context, namespace string, obj T, owner runtime.Object, controllerRef *metav1.OwnerReference) (T, error) {
	var zero T
	if err := CheckOwner(owner); err != nil {
		return zero, err
	}
	if controllerRef != nil {
		if err := ValidateControllerRef(controllerRef); err != nil {
			return zero, fmt.Errorf("%w: %w", ErrNotSent, err)
		}
	}
	toSend := obj.DeepCopyObject().(T)
	if controllerRef != nil {
		toSend.SetOwnerReferences([]metav1.OwnerReference{*controllerRef.DeepCopy()})
	}
	writeCtx, cancel := c.writeContext(ctx)
	defer cancel()
	created, err := c.writer.Create(writeCtx, namespace, toSend)
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

// Delete implements Interface. An owner without metadata, or a nil pointer
// of a concrete type (ErrNilOwner), is refused.
// NotFound records no event and, as upstream, is returned unchanged, so the
// caller can tell that someone else deleted the object; with
// WithNotFoundAsSuccess it is nil instead. Other errors record FailedDelete
// and are wrapped.
func (c *Control[T]) Delete(ctx context.Context, namespace, name string, owner runtime.Object) error {
	if err := CheckOwner(owner); err != nil {
		return err
	}
	accessor, err := meta.Accessor(owner)
	if err != nil {
		return fmt.Errorf("%w: object does not have ObjectMeta, %w", ErrNotSent, err)
	}
	logger := klog.FromContext(ctx)
	logger.V(2).Info("Deleting object", "kind", c.kind, "controller", accessor.GetName(), "object", klog.KRef(namespace, name))
	writeCtx, cancel := c.writeContext(ctx)
	defer cancel()
	if err := c.writer.Delete(writeCtx, namespace, name); err != nil {
		if apierrors.IsNotFound(err) {
			logger.V(4).Info("Object has already been deleted", "kind", c.kind, "object", klog.KRef(namespace, name))
			if c.notFoundIsOK {
				return nil
			}
			return err
		}
		c.event(owner, v1.EventTypeWarning, c.reasons.FailedDelete, "Error deleting: %v", err)
		return fmt.Errorf("unable to delete %s %s/%s: %w", c.kind, namespace, name, err)
	}
	c.event(owner, v1.EventTypeNormal, c.reasons.SuccessfulDelete, "Deleted %s: %v", c.kind, name)
	return nil
}

// Patch implements Interface.
func (c *Control[T]) Patch(ctx context.Context, namespace, name string, data []byte) error {
	_, err := c.PatchObject(ctx, namespace, name, data)
	return err
}

// PatchObject is Patch returning the patched object as the API server
// stored it.
func (c *Control[T]) PatchObject(ctx context.Context, namespace, name string, data []byte) (T, error) {
	writeCtx, cancel := c.writeContext(ctx)
	defer cancel()
	patched, err := c.writer.Patch(writeCtx, namespace, name, c.patchType, data)
	if err != nil {
		var zero T
		return zero, err
	}
	return patched, nil
}

// PatchSubresource sends data, a patch of patchType, to the named object's
// subresource ("" for the object itself), as an in-place update does (a
// pod's "resize"). The writer must be a SubresourceWriter; an error says
// so otherwise.
func (c *Control[T]) PatchSubresource(ctx context.Context, namespace, name, subresource string, patchType types.PatchType, data []byte) (T, error) {
	var zero T
	sw, ok := c.writer.(SubresourceWriter[T])
	if !ok {
		if subresource != "" {
			return zero, fmt.Errorf("objectcontrol: the %s writer cannot patch the %q subresource", c.kind, subresource)
		}
		writeCtx, cancel := c.writeContext(ctx)
		defer cancel()
		return c.writer.Patch(writeCtx, namespace, name, patchType, data)
	}
	writeCtx, cancel := c.writeContext(ctx)
	defer cancel()
	return sw.PatchSubresource(writeCtx, namespace, name, subresource, patchType, data)
}

// PatchType reports the patch type Patch sends, so a claim ref manager
// builds the body it needs.
func (c *Control[T]) PatchType() types.PatchType { return c.patchType }

// writeContext bounds one write by the timeout. A context whose deadline
// already comes no later is used as it is: a second deadline could never
// fire first, and deriving one costs as much as some writes (a caller that
// bounds each write itself, as podset does, would pay for it on every one).
func (c *Control[T]) writeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= c.timeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.timeout)
}

// event records an event against owner; with no recorder, or no owner to
// attach the event to, it records nothing.
func (c *Control[T]) event(owner runtime.Object, eventType, reason, format string, args ...any) {
	if c.recorder == nil || owner == nil {
		return
	}
	c.recorder.Eventf(owner, eventType, reason, format, args...)
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
