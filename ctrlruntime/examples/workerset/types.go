package workerset

import (
	_ "embed"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// CRD holds the WorkerSet and Worker CustomResourceDefinitions (crd.yaml).
//
//go:embed crd.yaml
var CRD []byte

// GroupVersion is the API group and version of WorkerSet and Worker.
var GroupVersion = schema.GroupVersion{Group: "examples.ctrlkit.io", Version: "v1alpha1"}

// AddToScheme registers WorkerSet, Worker and their lists, and apps/v1,
// whose ControllerRevisions keep a WorkerSet's rollout history.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &WorkerSet{}, &WorkerSetList{}, &Worker{}, &WorkerList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return appsv1.AddToScheme(s)
}

// WorkerSet keeps spec.replicas Workers.
type WorkerSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WorkerSetSpec   `json:"spec"`
	Status            WorkerSetStatus `json:"status,omitempty"`
}

// WorkerSetSpec is what a WorkerSet wants.
type WorkerSetSpec struct {
	// Replicas is the number of Workers; nil means 1.
	Replicas *int32 `json:"replicas,omitempty"`
	// Selector selects the Workers; it must match the template's labels.
	Selector *metav1.LabelSelector `json:"selector"`
	// Template is what each Worker is made from.
	Template WorkerTemplate `json:"template"`
	// Strategy is how Workers move to a changed template. Without a
	// rollingUpdate, Workers of an older template stay as they are.
	Strategy Strategy `json:"strategy,omitempty"`
	// RevisionHistoryLimit is how many old revisions are kept; nil means 10.
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`
	// MinReadySeconds is how long a Worker must have been ready (its
	// status.readySince) to count as available.
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`
	// Paused holds the rollout: the WorkerSet scales, at the current
	// revision, but replaces no Worker.
	Paused bool `json:"paused,omitempty"`
	// ProgressDeadlineSeconds is how long a rollout may go without a step
	// forward before its Progressing condition says it is stuck; nil means
	// no deadline and no condition.
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`
	// Lifecycle holds the hooks around a Worker's end.
	Lifecycle Lifecycle `json:"lifecycle,omitzero"`
}

// Lifecycle holds a WorkerSet's hooks around a Worker's end.
type Lifecycle struct {
	// PreDelete, when it has a label, holds each Worker the WorkerSet
	// would delete (a scale-in, or a replacement in a rollout) until it
	// is drained: the Worker gets the label, set to "pending", and is
	// deleted once whatever drains it changes or removes the label, or
	// timeoutSeconds after it was marked (0 means ten minutes).
	PreDelete PreDeleteHook `json:"preDelete,omitzero"`
}

// PreDeleteHook is a pre-delete gate.
type PreDeleteHook struct {
	Label          string `json:"label,omitempty"`
	TimeoutSeconds int32  `json:"timeoutSeconds,omitempty"`
}

// Strategy holds the rolling update, if any.
type Strategy struct {
	RollingUpdate *RollingUpdate `json:"rollingUpdate,omitempty"`
	// Type is how a Worker moves to a changed template: Recreate (the
	// default), InPlaceIfPossible or InPlaceOnly (see inplace.go).
	Type string `json:"type,omitempty"`
}

// RollingUpdate bounds a rollout as a Deployment's does (nil bounds mean
// 25%), and keeps partition Workers at the current revision.
type RollingUpdate struct {
	MaxSurge       *intstr.IntOrString `json:"maxSurge,omitempty"`
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	Partition      int32               `json:"partition,omitempty"`
}

// WorkerSetStatus is what the controller last saw of the Workers.
type WorkerSetStatus struct {
	ObservedGeneration  int64  `json:"observedGeneration,omitempty"`
	Replicas            int32  `json:"replicas,omitempty"`
	ReadyReplicas       int32  `json:"readyReplicas,omitempty"`
	AvailableReplicas   int32  `json:"availableReplicas,omitempty"`
	UpdatedReplicas     int32  `json:"updatedReplicas,omitempty"`
	CurrentReplicas     int32  `json:"currentReplicas,omitempty"`
	TerminatingReplicas int32  `json:"terminatingReplicas,omitempty"`
	CurrentRevision     string `json:"currentRevision,omitempty"`
	UpdateRevision      string `json:"updateRevision,omitempty"`
	CollisionCount      *int32 `json:"collisionCount,omitempty"`
	// Conditions holds Progressing, as a Deployment's, when
	// spec.progressDeadlineSeconds is set.
	Conditions []appsv1.DeploymentCondition `json:"conditions,omitempty"`
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
	// Image is the image the agent runs; empty when it does not say.
	Image string `json:"image,omitempty"`
	// ReadySince is when the Worker last became ready.
	ReadySince *metav1.Time `json:"readySince,omitempty"`
}

// WorkerList is a list of Workers.
type WorkerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Worker `json:"items"`
}

// The DeepCopy methods are written by hand; a generated set would do the
// same. Lifecycle holds only values, which the struct copies carry.

// DeepCopyInto copies s into out.
func (s *WorkerSet) DeepCopyInto(out *WorkerSet) {
	*out = *s
	s.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	s.Spec.DeepCopyInto(&out.Spec)
	if s.Status.CollisionCount != nil {
		out.Status.CollisionCount = new(int32)
		*out.Status.CollisionCount = *s.Status.CollisionCount
	}
	if s.Status.Conditions != nil {
		out.Status.Conditions = make([]appsv1.DeploymentCondition, len(s.Status.Conditions))
		for i := range s.Status.Conditions {
			s.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
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
	if s.RevisionHistoryLimit != nil {
		out.RevisionHistoryLimit = new(int32)
		*out.RevisionHistoryLimit = *s.RevisionHistoryLimit
	}
	if s.ProgressDeadlineSeconds != nil {
		out.ProgressDeadlineSeconds = new(int32)
		*out.ProgressDeadlineSeconds = *s.ProgressDeadlineSeconds
	}
	if ru := s.Strategy.RollingUpdate; ru != nil {
		out.Strategy.RollingUpdate = &RollingUpdate{Partition: ru.Partition}
		if ru.MaxSurge != nil {
			v := *ru.MaxSurge
			out.Strategy.RollingUpdate.MaxSurge = &v
		}
		if ru.MaxUnavailable != nil {
			v := *ru.MaxUnavailable
			out.Strategy.RollingUpdate.MaxUnavailable = &v
		}
	}
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
	out.Status.ReadySince = w.Status.ReadySince.DeepCopy()
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
