package podcontrol

import (
	"errors"
	"fmt"
	"maps"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// ErrNoLabels is returned when asked to create a pod whose template has no
// labels: no selector could ever match it, so the controller would orphan it
// and create another one on every sync.
var ErrNoLabels = errors.New("unable to create pods, no labels")

// ValidateControllerRef checks that ref can be set as a pod's controller
// reference: it is not nil, names an APIVersion and a Kind, and has
// Controller and BlockOwnerDeletion set to true. metav1.NewControllerRef
// builds such a reference. It is objectcontrol.ValidateControllerRef.
func ValidateControllerRef(ref *metav1.OwnerReference) error {
	return objectcontrol.ValidateControllerRef(ref)
}

// GetPodFromTemplate builds the pod a controller creates from template: its
// labels, annotations and finalizers copied, its spec deep-copied (the result
// never shares memory with template), the generateName "<parent name>-" (or
// the bare name when the dash would make an invalid prefix), and
// controllerRef, if not nil, as its only owner reference.
//
// It fails for a parent without ObjectMeta, and for a parent that is a nil
// pointer of a concrete type (objectcontrol.ErrNilOwner). Like upstream it
// does not check labels; the create path refuses a label-less pod with
// ErrNoLabels.
func GetPodFromTemplate(template *v1.PodTemplateSpec, parentObject runtime.Object, controllerRef *metav1.OwnerReference) (*v1.Pod, error) {
	if err := objectcontrol.CheckOwner(parentObject); err != nil {
		return nil, err
	}
	accessor, err := meta.Accessor(parentObject)
	if err != nil {
		return nil, fmt.Errorf("parentObject does not have ObjectMeta, %w", err)
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			// Non-nil even when empty, as upstream, so a caller can add
			// labels without a nil check.
			Labels:       cloneMap(template.Labels),
			Annotations:  cloneMap(template.Annotations),
			GenerateName: podNamePrefix(accessor.GetName()),
			Finalizers:   append([]string{}, template.Finalizers...),
		},
		Spec: *template.Spec.DeepCopy(),
	}
	if controllerRef != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*controllerRef.DeepCopy()}
	}
	return pod, nil
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	maps.Copy(out, m)
	return out
}

// podNamePrefix adds a dash to the owner's name for readable pod names,
// unless that would be an invalid name prefix (too long, for instance).
func podNamePrefix(owner string) string {
	prefix := owner + "-"
	if len(apimachineryvalidation.NameIsDNSSubdomain(prefix, true)) != 0 {
		return owner
	}
	return prefix
}
