package validation

import (
	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// selectorMismatch is upstream's message when a template's labels escape
// its owner's selector.
const selectorMismatch = "`selector` does not match template `labels`"

// ValidatePodTemplateSpecForReplicaSet runs the checks upstream's function
// of the same name makes itself on a ReplicaSet's (or ReplicaSet-like
// owner's) template: present, labels matched by a non-empty selector,
// restartPolicy Always, no activeDeadlineSeconds. The pod spec, labels and
// annotations are the API server's to check: see
// ValidatePodTemplateWithServer.
//
// replicas is not consulted, as upstream v1.37 does not consult it; it is
// kept so that calls port unchanged.
func ValidatePodTemplateSpecForReplicaSet(template *v1.PodTemplateSpec, selector labels.Selector, replicas int32, fldPath *field.Path) field.ErrorList {
	allErrs := field.ErrorList{}
	if template == nil {
		return append(allErrs, field.Required(fldPath, ""))
	}
	allErrs = append(allErrs, matchSelector(template, selector, fldPath)...)
	if template.Spec.RestartPolicy != v1.RestartPolicyAlways {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("spec", "restartPolicy"),
			template.Spec.RestartPolicy, []string{string(v1.RestartPolicyAlways)}))
	}
	if template.Spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("spec", "activeDeadlineSeconds"),
			"activeDeadlineSeconds in ReplicaSet is not Supported"))
	}
	return allErrs
}

// ValidatePodTemplateSpecForStatefulSet runs the checks upstream's function
// of the same name makes itself on a StatefulSet's template: present, labels
// matched by a non-empty selector, labels and annotations well formed. Note
// the paths upstream gives the last two, fldPath.labels and
// fldPath.annotations, without "metadata". The pod spec is the API server's
// to check (ValidatePodTemplateWithServer), and restartPolicy and
// activeDeadlineSeconds are checked by upstream's ValidateStatefulSetSpec,
// not by this function.
func ValidatePodTemplateSpecForStatefulSet(template *v1.PodTemplateSpec, selector labels.Selector, fldPath *field.Path) field.ErrorList {
	allErrs := field.ErrorList{}
	if template == nil {
		return append(allErrs, field.Required(fldPath, ""))
	}
	allErrs = append(allErrs, matchSelector(template, selector, fldPath)...)
	allErrs = append(allErrs, metavalidation.ValidateLabels(template.Labels, fldPath.Child("labels"))...)
	allErrs = append(allErrs, apivalidation.ValidateAnnotations(template.Annotations, fldPath.Child("annotations"))...)
	return allErrs
}

// matchSelector refuses template labels a non-empty selector does not
// match. Upstream skips an empty selector (the owner's own validation
// refuses it); a nil one is skipped alike instead of panicking.
func matchSelector(template *v1.PodTemplateSpec, selector labels.Selector, fldPath *field.Path) field.ErrorList {
	if selector == nil || selector.Empty() || selector.Matches(labels.Set(template.Labels)) {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath.Child("metadata", "labels"), template.Labels, selectorMismatch)}
}
