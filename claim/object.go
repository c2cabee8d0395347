package claim

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/internal/nilcheck"
)

// Patcher sends a patch to one object of the kind a ref manager handles. It
// is the only write a ref manager needs, so any client (typed, dynamic,
// controller-runtime, a fake) can be adapted in a few lines.
type Patcher interface {
	Patch(ctx context.Context, namespace, name string, data []byte) error
}

// PatcherFunc adapts a function to Patcher.
type PatcherFunc func(ctx context.Context, namespace, name string, data []byte) error

// Patch calls f.
func (f PatcherFunc) Patch(ctx context.Context, namespace, name string, data []byte) error {
	return f(ctx, namespace, name, data)
}

// PatchTyper is implemented by a Patcher that sends something other than
// strategic-merge patches. A ref manager asks it which body to build; a
// Patcher without it receives strategic-merge patches, as upstream sends.
// Only types.StrategicMergePatchType and types.MergePatchType are supported;
// custom resources need MergePatchType.
type PatchTyper interface {
	PatchType() types.PatchType
}

// ManagerOption configures an ObjectControllerRefManager.
type ManagerOption func(*managerConfig)

type managerConfig struct {
	finalizers []string
	kind       string
}

// WithFinalizers makes adoption add these finalizers and release remove them,
// as the Job controller does with its tracking finalizer.
func WithFinalizers(finalizers ...string) ManagerOption {
	return func(c *managerConfig) { c.finalizers = append(c.finalizers, finalizers...) }
}

// WithKind sets the kind named in error messages ("can't adopt <Kind> ...").
// By default it is the object's Go type name (Pod, ReplicaSet), or, for
// unstructured objects, the kind they carry.
func WithKind(kind string) ManagerOption {
	return func(c *managerConfig) { c.kind = kind }
}

// ObjectControllerRefManager claims, adopts and releases objects of any kind
// T (ReplicaSets, PVCs, custom resources as *unstructured.Unstructured) for
// one controller, with upstream's ClaimObject rules. It writes only through a
// Patcher.
//
// Create one per sync pass: CanAdopt's result is cached for the manager's
// lifetime.
type ObjectControllerRefManager[T metav1.Object] struct {
	BaseControllerRefManager
	controllerKind schema.GroupVersionKind
	patcher        Patcher
	finalizers     []string
	kind           string
}

// NewObjectControllerRefManager returns a manager for objects of type T owned
// by controller, of kind controllerKind, matched by selector (nil matches
// nothing). canAdopt, if not nil, runs at most once, before the first
// adoption; RecheckDeletionTimestamp builds the usual one.
func NewObjectControllerRefManager[T metav1.Object](patcher Patcher, controller metav1.Object, selector labels.Selector,
	controllerKind schema.GroupVersionKind, canAdopt func(context.Context) error, opts ...ManagerOption) *ObjectControllerRefManager[T] {
	m := &ObjectControllerRefManager[T]{}
	m.init(patcher, controller, selector, controllerKind, canAdopt, opts...)
	return m
}

// init fills a manager in place; the wrappers embed the manager by value and
// must not copy it (it holds a sync.Once).
func (m *ObjectControllerRefManager[T]) init(patcher Patcher, controller metav1.Object, selector labels.Selector,
	controllerKind schema.GroupVersionKind, canAdopt func(context.Context) error, opts ...ManagerOption) {
	var cfg managerConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	m.Controller = controller
	m.Selector = selector
	m.CanAdoptFunc = canAdopt
	m.controllerKind = controllerKind
	m.patcher = patcher
	m.finalizers = cfg.finalizers
	m.kind = cfg.kind
}

// Claim reconciles ownership of objs and returns the ones the controller owns
// afterwards, in input order. An object matches when the selector matches its
// labels (checked first, so filters only see candidates) and every filter
// returns true. Errors do not stop the loop: they are aggregated and the
// objects concerned are left out of the result. Nil entries are skipped.
func (m *ObjectControllerRefManager[T]) Claim(ctx context.Context, objs []T, filters ...func(T) bool) ([]T, error) {
	var errs []error
	// The controller's facts and the selector are read once for the whole
	// loop, and the closures take T directly, so the per-object cost is the
	// owner-reference scan plus, for our own objects and orphans, one
	// selector match.
	facts := m.controllerFacts()
	sel := m.Selector
	match := func(obj T) bool { return matchesAll(sel, filters, obj) }
	// The claimed objects are marked in a bitmap and gathered afterwards, so
	// the result is allocated once at its exact size: growing it by append
	// costs a dozen allocations and copies for a thousand pods, and sizing it
	// by the input would over-allocate when most objects belong to others.
	var buf [32]uint64
	var owned []uint64
	if words := (len(objs) + 63) / 64; words <= len(buf) {
		owned = buf[:words]
	} else {
		owned = make([]uint64, words)
	}
	n := 0
	for i, obj := range objs {
		ok, err := claimOne(ctx, facts, obj, match, m.Adopt, m.Release)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			owned[i/64] |= 1 << (i % 64)
			n++
		}
	}
	var claimed []T
	if n > 0 {
		claimed = make([]T, 0, n)
		for i, obj := range objs {
			if owned[i/64]&(1<<(i%64)) != 0 {
				claimed = append(claimed, obj)
			}
		}
	}
	return claimed, utilerrors.NewAggregate(errs)
}

// ClaimOne is Claim for a single object: it adopts or releases obj as Claim
// would and reports whether the controller owns it afterwards. A caller that
// must look at every object anyway (to count it, say) can claim inside its
// own loop and so read each object once, instead of once for the claim and
// again in a second pass. The error is the one Claim would have aggregated.
func (m *ObjectControllerRefManager[T]) ClaimOne(ctx context.Context, obj T, filters ...func(T) bool) (bool, error) {
	sel := m.Selector
	match := func(obj T) bool { return matchesAll(sel, filters, obj) }
	return claimOne(ctx, m.controllerFacts(), obj, match, m.Adopt, m.Release)
}

// matchesAll reports whether sel matches obj's labels and every filter
// accepts obj. A nil selector matches nothing (see BaseControllerRefManager);
// the selector is checked first, so filters only see candidates.
func matchesAll[T metav1.Object](sel labels.Selector, filters []func(T) bool, obj T) bool {
	if sel == nil || !sel.Matches(labels.Set(obj.GetLabels())) {
		return false
	}
	for _, filter := range filters {
		if !filter(obj) {
			return false
		}
	}
	return true
}

// Adopt makes the controller the managing owner of obj, after CanAdopt
// allows it. The patch carries obj's UID as a precondition; the API server
// refuses it if obj already has another controller. A controller without a
// UID is refused with an error wrapping ErrControllerHasNoUID, and a nil obj
// with an error, both without a patch.
func (m *ObjectControllerRefManager[T]) Adopt(ctx context.Context, obj T) error {
	if nilcheck.IsNil(obj) {
		return errNilObject
	}
	if m.Controller.GetUID() == "" {
		return fmt.Errorf("can't adopt %s %v/%v: %w", m.kindOf(obj), obj.GetNamespace(), obj.GetName(), ErrControllerHasNoUID)
	}
	if err := m.CanAdopt(ctx); err != nil {
		return fmt.Errorf("can't adopt %s %v/%v (%v): %w", m.kindOf(obj), obj.GetNamespace(), obj.GetName(), obj.GetUID(), err)
	}
	pt, err := m.patchType()
	if err != nil {
		return err
	}
	var data []byte
	if pt == types.MergePatchType {
		data, err = adoptMergeBytes(m.Controller, m.controllerKind, obj, m.finalizers...)
	} else {
		data, err = adoptStrategicMergeBytes(m.Controller, m.controllerKind, obj.GetUID(), m.finalizers...)
	}
	if err != nil {
		return fmt.Errorf("can't build adoption patch for %s %v/%v: %w", m.kindOf(obj), obj.GetNamespace(), obj.GetName(), err)
	}
	return m.patcher.Patch(ctx, obj.GetNamespace(), obj.GetName(), data)
}

// Release removes the controller's owner reference (and the manager's
// finalizers) from obj. NotFound (the object is gone) and Invalid (it has no
// owner references left, or was recreated with another UID) mean there is
// nothing to release and return nil. A nil obj is an error, without a patch.
func (m *ObjectControllerRefManager[T]) Release(ctx context.Context, obj T) error {
	if nilcheck.IsNil(obj) {
		return errNilObject
	}
	klog.FromContext(ctx).V(2).Info("Patching object to remove its controllerRef", "kind", m.kindOf(obj),
		"object", klog.KObj(obj), "gvk", m.controllerKind, "controller", m.Controller.GetName())
	pt, err := m.patchType()
	if err != nil {
		return err
	}
	var data []byte
	if pt == types.MergePatchType {
		data, err = releaseMergeBytes(m.Controller.GetUID(), obj, m.finalizers...)
	} else {
		data, err = GenerateDeleteOwnerRefStrategicMergeBytes(obj.GetUID(), []types.UID{m.Controller.GetUID()}, m.finalizers...)
	}
	if err != nil {
		return fmt.Errorf("can't build release patch for %s %v/%v: %w", m.kindOf(obj), obj.GetNamespace(), obj.GetName(), err)
	}
	err = m.patcher.Patch(ctx, obj.GetNamespace(), obj.GetName(), data)
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		return nil
	}
	return err
}

// patchType is the body format the patcher expects.
func (m *ObjectControllerRefManager[T]) patchType() (types.PatchType, error) {
	typer, ok := m.patcher.(PatchTyper)
	if !ok {
		return types.StrategicMergePatchType, nil
	}
	switch pt := typer.PatchType(); pt {
	case types.StrategicMergePatchType, types.MergePatchType:
		return pt, nil
	default:
		return "", fmt.Errorf("claim: unsupported patch type %q", pt)
	}
}

// kindOf names obj's kind for messages: the configured kind, else the kind an
// object carries (unstructured objects), else its Go type name.
func (m *ObjectControllerRefManager[T]) kindOf(obj metav1.Object) string {
	if m.kind != "" {
		return m.kind
	}
	if ro, ok := obj.(runtime.Object); ok {
		if k := ro.GetObjectKind().GroupVersionKind().Kind; k != "" {
			return k
		}
	}
	t := reflect.TypeOf(obj)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}
