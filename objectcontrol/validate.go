package objectcontrol

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
