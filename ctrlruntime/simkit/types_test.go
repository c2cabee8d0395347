package simkit_test

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// WorkerSet and Worker are the custom resources of the tests: a WorkerSet
// wants spec.replicas Workers. The deep copies are written by hand; no
// code generator runs.

var (
	demoGV       = schema.GroupVersion{Group: "demo.ctrlkit.io", Version: "v1"}
	workerSetGVK = demoGV.WithKind("WorkerSet")
)

type WorkerSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WorkerSetSpec   `json:"spec"`
	Status            WorkerSetStatus `json:"status,omitempty"`
}

type WorkerSetSpec struct {
	Replicas int32 `json:"replicas"`
}

type WorkerSetStatus struct {
	Replicas int32 `json:"replicas,omitempty"`
}

func (s *WorkerSet) DeepCopyObject() runtime.Object {
	out := *s
	s.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

type WorkerSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkerSet `json:"items"`
}

func (l *WorkerSetList) DeepCopyObject() runtime.Object {
	out := &WorkerSetList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]WorkerSet, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*WorkerSet)
	}
	return out
}

type Worker struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WorkerSpec `json:"spec"`
}

type WorkerSpec struct {
	Image string `json:"image"`
}

func (w *Worker) DeepCopyObject() runtime.Object {
	out := *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

type WorkerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Worker `json:"items"`
}

func (l *WorkerList) DeepCopyObject() runtime.Object {
	out := &WorkerList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]Worker, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*Worker)
	}
	return out
}

// newScheme has client-go's kinds, WorkerSet and Worker.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	s.AddKnownTypes(demoGV, &WorkerSet{}, &WorkerSetList{}, &Worker{}, &WorkerList{})
	metav1.AddToGroupVersion(s, demoGV)
	return s
}
