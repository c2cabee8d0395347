package objectcontrol

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ctrlkit/ctrlkit/internal/nilcheck"
)

// ErrNilOwner is returned, wrapped, for an owner that is a nil pointer of a
// concrete type, such as a (*appsv1.ReplicaSet)(nil) passed as a
// runtime.Object: the interface is not nil, but no name, UID or event can
// be read from it.
var ErrNilOwner = errors.New("owner is a nil pointer")

// CheckOwner returns an error wrapping ErrNilOwner when owner holds a nil
// pointer (or other nil value) of a concrete type; a nil interface and any
// other owner are nil. A write refuses such an owner before it calls the
// API.
func CheckOwner(owner runtime.Object) error {
	if owner != nil && nilcheck.IsNil(owner) {
		return fmt.Errorf("%w: %T", ErrNilOwner, owner)
	}
	return nil
}

// ValidateControllerRef checks that ref can be set as an object's controller
// reference: it is not nil, names an APIVersion and a Kind, and has
// Controller and BlockOwnerDeletion set to true. metav1.NewControllerRef
// builds such a reference.
func ValidateControllerRef(ref *metav1.OwnerReference) error {
	switch {
	case ref == nil:
		return errors.New("controllerRef is nil")
	case ref.APIVersion == "":
		return errors.New("controllerRef has empty APIVersion")
	case ref.Kind == "":
		return errors.New("controllerRef has empty Kind")
	case ref.Controller == nil || !*ref.Controller:
		return errors.New("controllerRef.Controller is not set to true")
	case ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion:
		return errors.New("controllerRef.BlockOwnerDeletion is not set")
	}
	return nil
}
