package podcontrol

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestGetPodFromTemplate(t *testing.T) {
	rc := controller("default", "123", false)
	ref := metav1.NewControllerRef(rc, fakeKind)
	long := controller("default", "1", false)
	// Upstream's prefix check masks the dash and one more character, so
	// 253 characters still get a dash; 254 do not.
	long.Name = strings.Repeat("a", 254)
	tests := []struct {
		name       string
		template   *v1.PodTemplateSpec
		parent     runtime.Object
		ref        *metav1.OwnerReference
		wantPrefix string
		wantErr    string
	}{
		{name: "copies template", template: podTemplate(), parent: rc, ref: ref, wantPrefix: "rc-"},
		{name: "no controller ref", template: podTemplate(), parent: rc, wantPrefix: "rc-"},
		{name: "name too long for a dash", template: podTemplate(), parent: long, ref: ref, wantPrefix: long.Name},
		{name: "empty template", template: &v1.PodTemplateSpec{}, parent: rc, wantPrefix: "rc-"},
		{name: "parent without metadata", template: podTemplate(), parent: nil, wantErr: "parentObject does not have ObjectMeta"},
		{name: "parent without metadata", template: podTemplate(), parent: &runtime.Unknown{}, wantErr: "does not have ObjectMeta"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod, err := GetPodFromTemplate(tc.template, tc.parent, tc.ref)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Nil(t, pod)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantPrefix, pod.GenerateName)
			assert.Empty(t, pod.Name)
			assert.NotNil(t, pod.Labels)
			assert.NotNil(t, pod.Annotations)
			assert.NotNil(t, pod.Finalizers)
			assert.Equal(t, len(tc.template.Labels), len(pod.Labels))
			assert.Equal(t, tc.template.Spec, pod.Spec)
			if tc.ref == nil {
				assert.Empty(t, pod.OwnerReferences)
			} else {
				assert.Equal(t, []metav1.OwnerReference{*tc.ref}, pod.OwnerReferences)
			}
			// Nothing is shared with the template or the ref.
			if len(tc.template.Spec.Containers) > 0 {
				pod.Spec.Containers[0].Image = "changed"
				assert.NotEqual(t, "changed", tc.template.Spec.Containers[0].Image)
			}
			pod.Labels["new"] = "x"
			assert.NotContains(t, tc.template.Labels, "new")
			if len(pod.Finalizers) > 0 {
				pod.Finalizers[0] = "changed"
				assert.NotEqual(t, "changed", tc.template.Finalizers[0])
			}
			if tc.ref != nil {
				*pod.OwnerReferences[0].Controller = false
				assert.True(t, *tc.ref.Controller)
			}
		})
	}
}

func TestValidateControllerRef(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name string
		ref  *metav1.OwnerReference
		want string
	}{
		{name: "valid", ref: &metav1.OwnerReference{APIVersion: "v1", Kind: "K", Controller: &yes, BlockOwnerDeletion: &yes}},
		{name: "nil", ref: nil, want: "controllerRef is nil"},
		{name: "no api version", ref: &metav1.OwnerReference{Kind: "K", Controller: &yes, BlockOwnerDeletion: &yes}, want: "controllerRef has empty APIVersion"},
		{name: "no kind", ref: &metav1.OwnerReference{APIVersion: "v1", Controller: &yes, BlockOwnerDeletion: &yes}, want: "controllerRef has empty Kind"},
		{name: "controller unset", ref: &metav1.OwnerReference{APIVersion: "v1", Kind: "K", BlockOwnerDeletion: &yes}, want: "controllerRef.Controller is not set to true"},
		{name: "controller false", ref: &metav1.OwnerReference{APIVersion: "v1", Kind: "K", Controller: &no, BlockOwnerDeletion: &yes}, want: "controllerRef.Controller is not set to true"},
		{name: "block unset", ref: &metav1.OwnerReference{APIVersion: "v1", Kind: "K", Controller: &yes}, want: "controllerRef.BlockOwnerDeletion is not set"},
		{name: "block false", ref: &metav1.OwnerReference{APIVersion: "v1", Kind: "K", Controller: &yes, BlockOwnerDeletion: &no}, want: "controllerRef.BlockOwnerDeletion is not set"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateControllerRef(tc.ref)
			if tc.want == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, tc.want)
			}
		})
	}
}

func FuzzPodNamePrefix(f *testing.F) {
	f.Add("rc")
	f.Add(strings.Repeat("a", 252))
	f.Add(strings.Repeat("a", 253))
	f.Add(strings.Repeat("a", 254))
	f.Add("Upper_Case")
	f.Add("")
	f.Fuzz(func(t *testing.T, owner string) {
		got := podNamePrefix(owner)
		if got != owner && got != owner+"-" {
			t.Fatalf("prefix %q for %q", got, owner)
		}
		if len(validation.IsDNS1123Subdomain(owner)) == 0 && len(owner) < 253 && got != owner+"-" {
			t.Fatalf("no dash for valid name %q", owner)
		}
		if len(owner) > 254 && got != owner {
			t.Fatalf("dash added to over-long name %q", owner)
		}
	})
}
