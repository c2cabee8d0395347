package gang

import (
	_ "embed"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// CRD holds the Gang CustomResourceDefinition (crd.yaml).
//
//go:embed crd.yaml
var CRD []byte

// GroupVersion is the API group and version of Gang.
var GroupVersion = schema.GroupVersion{Group: "examples.ctrlkit.io", Version: "v1alpha1"}

// AddToScheme registers Gang and GangList, and apps/v1, whose
// ControllerRevisions keep a Gang's rollout history.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Gang{}, &GangList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return appsv1.AddToScheme(s)
}

// Gang keeps spec.replicas pods named <gang>-<index>.
type Gang struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GangSpec   `json:"spec"`
	Status            GangStatus `json:"status,omitempty"`
}

// GangSpec is what a Gang wants.
type GangSpec struct {
	// Replicas is the number of pods; nil means 1.
	Replicas *int32 `json:"replicas,omitempty"`
	// Selector selects the pods; it must match the template's labels.
	Selector *metav1.LabelSelector `json:"selector"`
	// Template is what each pod is made from.
	Template corev1.PodTemplateSpec `json:"template"`
	// Strategy is how pods move to a changed template. Without a
	// rollingUpdate, pods of an older template stay as they are.
	Strategy Strategy `json:"strategy,omitempty"`
	// RevisionHistoryLimit is how many old revisions are kept; nil means 10.
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`
	// MinReadySeconds is how long a pod must have been ready to count as
	// available.
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`
	// Lifecycle holds the hooks around a pod's end.
	Lifecycle Lifecycle `json:"lifecycle,omitzero"`
}

// Lifecycle holds a Gang's hooks around a pod's end.
type Lifecycle struct {
	// PreDelete, when it has a label, holds each pod the Gang would
	// delete (a scale-in, or a replacement in place of its index) until
	// it has handed its work over: the pod gets the label, set to
	// "pending", and is deleted once the label is changed or removed, or
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
	// Type is how a pod moves to a changed template: Recreate (the
	// default), InPlaceIfPossible or InPlaceOnly (podset.InPlace says what
	// changes in place).
	Type string `json:"type,omitempty"`
}

// RollingUpdate replaces pods in place of their index, highest first,
// keeping the indices below partition at the current revision. An index
// has one name, so maxSurge adds no pods (see childset.RollingUpdate); nil
// bounds mean 25%.
type RollingUpdate struct {
	MaxSurge       *intstr.IntOrString `json:"maxSurge,omitempty"`
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	Partition      int32               `json:"partition,omitempty"`
}

// GangStatus is what the controller last saw of the pods.
type GangStatus struct {
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
	// Conditions completes the layout of childset.StatusFields, so that
	// the adapter hands childset the status as it is; a Gang has no
	// progress deadline, so childset sets none.
	Conditions []appsv1.DeploymentCondition `json:"conditions,omitempty"`
}

// GangList is a list of Gangs.
type GangList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gang `json:"items"`
}

// DeepCopyInto copies g into out; written by hand, as a generator would.
// Lifecycle holds only values, which the struct copy carries.
func (g *Gang) DeepCopyInto(out *Gang) {
	*out = *g
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if g.Spec.Replicas != nil {
		out.Spec.Replicas = new(int32)
		*out.Spec.Replicas = *g.Spec.Replicas
	}
	out.Spec.Selector = g.Spec.Selector.DeepCopy()
	g.Spec.Template.DeepCopyInto(&out.Spec.Template)
	if g.Spec.RevisionHistoryLimit != nil {
		out.Spec.RevisionHistoryLimit = new(int32)
		*out.Spec.RevisionHistoryLimit = *g.Spec.RevisionHistoryLimit
	}
	if ru := g.Spec.Strategy.RollingUpdate; ru != nil {
		out.Spec.Strategy.RollingUpdate = &RollingUpdate{Partition: ru.Partition}
		if ru.MaxSurge != nil {
			v := *ru.MaxSurge
			out.Spec.Strategy.RollingUpdate.MaxSurge = &v
		}
		if ru.MaxUnavailable != nil {
			v := *ru.MaxUnavailable
			out.Spec.Strategy.RollingUpdate.MaxUnavailable = &v
		}
	}
	if g.Status.CollisionCount != nil {
		out.Status.CollisionCount = new(int32)
		*out.Status.CollisionCount = *g.Status.CollisionCount
	}
	if g.Status.Conditions != nil {
		out.Status.Conditions = make([]appsv1.DeploymentCondition, len(g.Status.Conditions))
		for i := range g.Status.Conditions {
			g.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
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
