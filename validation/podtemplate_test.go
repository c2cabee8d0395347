package validation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validTemplate(edit ...func(*v1.PodTemplateSpec)) *v1.PodTemplateSpec {
	t := &v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyAlways,
			DNSPolicy:     v1.DNSClusterFirst,
			Containers:    []v1.Container{{Name: "ctr", Image: "image", ImagePullPolicy: v1.PullIfNotPresent}},
		},
	}
	for _, e := range edit {
		e(t)
	}
	return t
}

func TestValidatePodTemplateSpecForReplicaSet(t *testing.T) {
	p := field.NewPath("spec", "template")
	matching := labels.SelectorFromSet(labels.Set{"a": "b"})
	other := labels.SelectorFromSet(labels.Set{"foo": "bar"})
	deadline := int64(30)
	for _, tt := range []struct {
		name     string
		template *v1.PodTemplateSpec
		selector labels.Selector
		want     field.ErrorList
	}{
		{"valid", validTemplate(), matching, nil},
		{"nil template", nil, matching, field.ErrorList{field.Required(p, "")}},
		{"selector does not match", validTemplate(), other,
			field.ErrorList{field.Invalid(p.Child("metadata", "labels"), map[string]string{"a": "b"}, selectorMsg)}},
		{"empty selector is not matched", validTemplate(), labels.Everything(), nil},
		{"nil selector is not matched", validTemplate(), nil, nil},
		{"restart policy OnFailure", validTemplate(func(t *v1.PodTemplateSpec) { t.Spec.RestartPolicy = v1.RestartPolicyOnFailure }), matching,
			field.ErrorList{field.NotSupported(p.Child("spec", "restartPolicy"), v1.RestartPolicyOnFailure, []string{"Always"})}},
		{"restart policy Never", validTemplate(func(t *v1.PodTemplateSpec) { t.Spec.RestartPolicy = v1.RestartPolicyNever }), matching,
			field.ErrorList{field.NotSupported(p.Child("spec", "restartPolicy"), v1.RestartPolicyNever, []string{"Always"})}},
		{"restart policy not defaulted", validTemplate(func(t *v1.PodTemplateSpec) { t.Spec.RestartPolicy = "" }), matching,
			field.ErrorList{field.NotSupported(p.Child("spec", "restartPolicy"), v1.RestartPolicy(""), []string{"Always"})}},
		{"active deadline", validTemplate(func(t *v1.PodTemplateSpec) { t.Spec.ActiveDeadlineSeconds = &deadline }), matching,
			field.ErrorList{field.Forbidden(p.Child("spec", "activeDeadlineSeconds"), rsDeadlineMsg)}},
		{"everything wrong, in upstream's order", validTemplate(func(t *v1.PodTemplateSpec) {
			t.Spec.RestartPolicy = v1.RestartPolicyNever
			t.Spec.ActiveDeadlineSeconds = &deadline
		}), other, field.ErrorList{
			field.Invalid(p.Child("metadata", "labels"), map[string]string{"a": "b"}, selectorMsg),
			field.NotSupported(p.Child("spec", "restartPolicy"), v1.RestartPolicyNever, []string{"Always"}),
			field.Forbidden(p.Child("spec", "activeDeadlineSeconds"), rsDeadlineMsg),
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, replicas := range []int32{0, 3} {
				got := ValidatePodTemplateSpecForReplicaSet(tt.template, tt.selector, replicas, p)
				assert.Equal(t, summarize(tt.want), summarize(got), "replicas %d", replicas)
			}
		})
	}

	errs := ValidatePodTemplateSpecForReplicaSet(validTemplate(func(t *v1.PodTemplateSpec) { t.Spec.RestartPolicy = v1.RestartPolicyNever }), matching, 1, p)
	assert.Equal(t, `spec.template.spec.restartPolicy: Unsupported value: "Never": `+alwaysOnlyText, errs[0].Error())
}

func TestValidatePodTemplateSpecForStatefulSet(t *testing.T) {
	p := field.NewPath("spec", "template")
	matching := labels.SelectorFromSet(labels.Set{"a": "b"})
	deadline := int64(30)
	badKey := "NoUppercaseOrSpecialCharsLike=Equals"
	for _, tt := range []struct {
		name     string
		template *v1.PodTemplateSpec
		selector labels.Selector
		want     []fieldErr // Type and Field; the label and annotation texts are apimachinery's
	}{
		{"valid", validTemplate(), matching, nil},
		{"restart policy and deadline are the spec's to check", validTemplate(func(t *v1.PodTemplateSpec) {
			t.Spec.RestartPolicy = v1.RestartPolicyNever
			t.Spec.ActiveDeadlineSeconds = &deadline
		}), matching, nil},
		{"nil template", nil, matching, []fieldErr{{Type: field.ErrorTypeRequired, Field: "spec.template"}}},
		{"nil selector", validTemplate(), nil, nil},
		{"selector does not match", validTemplate(), labels.SelectorFromSet(labels.Set{"foo": "bar"}),
			[]fieldErr{{Type: field.ErrorTypeInvalid, Field: "spec.template.metadata.labels"}}},
		{"invalid label, at upstream's path without metadata", validTemplate(func(t *v1.PodTemplateSpec) { t.Labels[badKey] = "b" }), matching,
			[]fieldErr{{Type: field.ErrorTypeInvalid, Field: "spec.template.labels"}}},
		{"invalid annotation", validTemplate(func(t *v1.PodTemplateSpec) { t.Annotations = map[string]string{badKey: "b"} }), matching,
			[]fieldErr{{Type: field.ErrorTypeInvalid, Field: "spec.template.annotations"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []fieldErr
			for _, e := range ValidatePodTemplateSpecForStatefulSet(tt.template, tt.selector, p) {
				got = append(got, fieldErr{Type: e.Type, Field: e.Field})
			}
			assert.Equal(t, tt.want, got)
		})
	}

	errs := ValidatePodTemplateSpecForStatefulSet(validTemplate(), labels.SelectorFromSet(labels.Set{"foo": "bar"}), p)
	assert.Equal(t, "spec.template.metadata.labels: Invalid value: {\"a\":\"b\"}: "+selectorMsg, errs[0].Error())
}
