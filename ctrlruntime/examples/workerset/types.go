package workerset

import (
	_ "embed"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CRD holds the WorkerSet and Worker CustomResourceDefinitions (crd.yaml).
//
//go:embed crd.yaml
var CRD []byte

// GroupVersion is the API group and version of WorkerSet and Worker.
var GroupVersion = schema.GroupVersion{Group: "examples.ctrlkit.io", Version: "v1alpha1"}

// AddToScheme registers WorkerSet, Worker and their lists.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &WorkerSet{}, &WorkerSetList{}, &Worker{}, &WorkerList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// WorkerSet keeps spec.replicas Workers.
type WorkerSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WorkerSetSpec `json:"spec"`
}

// WorkerSetSpec is what a WorkerSet wants.
type WorkerSetSpec struct {
	// Replicas is the number of Workers; nil means 1.
	Replicas *int32 `json:"replicas,omitempty"`
	// Selector selects the Workers; it must match the template's labels.
	Selector *metav1.LabelSelector `json:"selector"`
	// Template is what each Worker is made from.
	Template WorkerTemplate `json:"template"`
}

// WorkerTemplate is a Worker to make: its labels and annotations, and its
// spec.
type WorkerTemplate struct {
	Metadata TemplateMetadata `json:"metadata,omitempty"`
	Spec     WorkerSpec       `json:"spec,omitempty"`
}

// TemplateMetadata is the metadata a template gives each Worker.
type TemplateMetadata struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// WorkerSetList is a list of WorkerSets.
type WorkerSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkerSet `json:"items"`
}

// Worker is one unit of capacity (a machine, a VM) whose agent reports
// whether it is ready.
type Worker struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WorkerSpec   `json:"spec,omitempty"`
	Status            WorkerStatus `json:"status,omitempty"`
}

// WorkerSpec is what a Worker runs on and runs.
type WorkerSpec struct {
	MachineClass string `json:"machineClass,omitempty"`
	Image        string `json:"image,omitempty"`
}

// WorkerStatus is what the Worker's agent reports.
type WorkerStatus struct {
	Ready bool `json:"ready,omitempty"`
}

// WorkerList is a list of Workers.
type WorkerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Worker `json:"items"`
}

// The DeepCopy methods are written by hand; a generated set would do the
// same.

// DeepCopyInto copies s into out.
func (s *WorkerSet) DeepCopyInto(out *WorkerSet) {
	*out = *s
	s.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	s.Spec.DeepCopyInto(&out.Spec)
}

// DeepCopy returns a copy of s.
func (s *WorkerSet) DeepCopy() *WorkerSet {
	if s == nil {
		return nil
	}
	out := new(WorkerSet)
	s.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (s *WorkerSet) DeepCopyObject() runtime.Object {
	if c := s.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies s into out.
func (s *WorkerSetSpec) DeepCopyInto(out *WorkerSetSpec) {
	*out = *s
	if s.Replicas != nil {
		out.Replicas = new(int32)
		*out.Replicas = *s.Replicas
	}
	out.Selector = s.Selector.DeepCopy()
	out.Template.Metadata.Labels = maps.Clone(s.Template.Metadata.Labels)
	out.Template.Metadata.Annotations = maps.Clone(s.Template.Metadata.Annotations)
}

// DeepCopyInto copies l into out.
func (l *WorkerSetList) DeepCopyInto(out *WorkerSetList) {
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]WorkerSet, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopyObject implements runtime.Object.
func (l *WorkerSetList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(WorkerSetList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies w into out.
func (w *Worker) DeepCopyInto(out *Worker) {
	*out = *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
}

// DeepCopy returns a copy of w.
func (w *Worker) DeepCopy() *Worker {
	if w == nil {
		return nil
	}
	out := new(Worker)
	w.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (w *Worker) DeepCopyObject() runtime.Object {
	if c := w.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies l into out.
func (l *WorkerList) DeepCopyInto(out *WorkerList) {
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Worker, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopyObject implements runtime.Object.
func (l *WorkerList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(WorkerList)
	l.DeepCopyInto(out)
	return out
}
