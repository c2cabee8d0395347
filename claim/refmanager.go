package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/internal/nilcheck"
)

// ErrControllerHasNoUID is returned, wrapped, when a controller without a UID
// (one never stored by the API server, or built by hand) would adopt an
// object: the owner reference would carry uid "", which names no object, so
// the garbage collector would treat the adopted object as an orphan of a
// missing owner.
var ErrControllerHasNoUID = errors.New("the controller has no UID")

// errNilObject is returned by Adopt and Release for a nil object.
var errNilObject = errors.New("claim: nil object")

// BaseControllerRefManager holds the algorithm shared by every ref manager:
// given an object, decide whether the controller owns it, should adopt it or
// should release it. The kind-specific managers supply the match, adopt and
// release functions.
//
// A nil Selector matches nothing, the same as labels.Nothing() and what
// metav1.LabelSelectorAsSelector returns for a nil LabelSelector: nothing is
// adopted, and objects the controller owns are released. Use
// labels.Everything() to match everything.
//
// Controller must be set. Do not copy a manager after first use.
type BaseControllerRefManager struct {
	Controller metav1.Object
	Selector   labels.Selector

	canAdoptOnce sync.Once
	canAdoptErr  error
	// CanAdoptFunc is an optional, possibly expensive, check (such as a live
	// GET of the controller) run before the first adoption.
	CanAdoptFunc func(ctx context.Context) error
}

// CanAdopt runs CanAdoptFunc at most once per manager and returns its cached
// result on every call, so one expensive check covers a whole sync pass. A nil
// CanAdoptFunc allows adoption. Create a new manager to check again.
func (m *BaseControllerRefManager) CanAdopt(ctx context.Context) error {
	m.canAdoptOnce.Do(func() {
		if m.CanAdoptFunc != nil {
			m.canAdoptErr = m.CanAdoptFunc(ctx)
		}
	})
	return m.canAdoptErr
}

// ClaimObject reconciles the ownership of one object and reports whether the
// controller owns it afterwards:
//
//   - owned by another controller: left alone, (false, nil);
//   - owned by us and matching: (true, nil), even while we or it are being
//     deleted, since keeping what we own needs no write;
//   - owned by us, not matching: released, unless we are being deleted;
//   - an orphan that matches, is not being deleted, and is in our namespace
//     (or we are cluster-scoped), while we are not being deleted: adopted,
//     unless we have no UID (an error wrapping ErrControllerHasNoUID);
//   - a nil object: skipped, (false, nil).
//
// NotFound from adopt or release means the object is gone and is not an
// error. Any other error is returned so the caller can retry the sync.
func (m *BaseControllerRefManager) ClaimObject(ctx context.Context, obj metav1.Object, match func(metav1.Object) bool,
	adopt, release func(context.Context, metav1.Object) error) (bool, error) {
	return claimOne(ctx, m.controllerFacts(), obj, match, adopt, release)
}

// controllerFacts are the parts of the controller that every ClaimObject
// decision reads. A claim loop gathers them once instead of once per object.
type controllerFacts struct {
	uid       types.UID
	namespace string
	deleting  bool
}

func (m *BaseControllerRefManager) controllerFacts() controllerFacts {
	return controllerFacts{
		uid:       m.Controller.GetUID(),
		namespace: m.Controller.GetNamespace(),
		deleting:  m.Controller.GetDeletionTimestamp() != nil,
	}
}

// claimOne is ClaimObject with the controller's facts gathered. match runs only when the outcome depends on it, so objects owned
// by another controller cost one owner-reference scan.
func claimOne[O metav1.Object](ctx context.Context, c controllerFacts, obj O, match func(O) bool,
	adopt, release func(context.Context, O) error) (bool, error) {
	if nilcheck.IsNil(obj) {
		return false, nil
	}
	matches := func() bool { return match(obj) }

	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		if ref.UID != c.uid {
			return false, nil
		}
		if matches() {
			return true, nil
		}
		// A controller that is going away must not shed its objects: the
		// garbage collector will handle them with the owner.
		if c.deleting {
			return false, nil
		}
		if err := release(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		return false, nil
	}

	// An orphan.
	if c.deleting || !matches() {
		return false, nil
	}
	if obj.GetDeletionTimestamp() != nil {
		return false, nil
	}
	// Owner references cannot cross namespaces; only a cluster-scoped
	// controller may adopt objects in any namespace.
	if c.namespace != "" && c.namespace != obj.GetNamespace() {
		return false, nil
	}
	if c.uid == "" {
		return false, fmt.Errorf("can't adopt %v/%v: %w", obj.GetNamespace(), obj.GetName(), ErrControllerHasNoUID)
	}
	if err := adopt(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}
