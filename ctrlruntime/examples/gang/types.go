package gang

import (
	_ "embed"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CRD holds the Gang CustomResourceDefinition (crd.yaml).
//
//go:embed crd.yaml
var CRD []byte

// GroupVersion is the API group and version of Gang.
var GroupVersion = schema.GroupVersion{Group: "examples.ctrlkit.io", Version: "v1alpha1"}

// AddToScheme registers Gang and GangList.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Gang{}, &GangList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Gang keeps spec.replicas pods named <gang>-<index>.
type Gang struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GangSpec `json:"spec"`
}

// GangSpec is what a Gang wants.
type GangSpec struct {
	// Replicas is the number of pods; nil means 1.
	Replicas *int32 `json:"replicas,omitempty"`
	// Selector selects the pods; it must match the template's labels.
	Selector *metav1.LabelSelector `json:"selector"`
	// Template is what each pod is made from.
	Template corev1.PodTemplateSpec `json:"template"`
}

// GangList is a list of Gangs.
type GangList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gang `json:"items"`
}

// DeepCopyInto copies g into out; written by hand, as a generator would.
func (g *Gang) DeepCopyInto(out *Gang) {
	*out = *g
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if g.Spec.Replicas != nil {
		out.Spec.Replicas = new(int32)
		*out.Spec.Replicas = *g.Spec.Replicas
	}
	out.Spec.Selector = g.Spec.Selector.DeepCopy()
	g.Spec.Template.DeepCopyInto(&out.Spec.Template)
}

// DeepCopy returns a copy of g.
func (g *Gang) DeepCopy() *Gang {
	if g == nil {
		return nil
	}
	out := new(Gang)
	g.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (g *Gang) DeepCopyObject() runtime.Object {
	if c := g.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies l into out.
func (l *GangList) DeepCopyInto(out *GangList) {
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Gang, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopyObject implements runtime.Object.
func (l *GangList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(GangList)
	l.DeepCopyInto(out)
	return out
}
