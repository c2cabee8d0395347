package replicaset

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// owner is everything the core needs to know about a ReplicaSet or a
// ReplicationController. The two kinds differ only in where these values live
// and in how a selector is written, so a thin wrapper per kind is enough and
// the sync loop never looks at a concrete type.
type owner interface {
	metav1.Object
	// object is the API object itself. Events and pod control need it: the
	// wrapper type is unknown to the scheme and could not be referenced.
	object() runtime.Object
	// replicas is spec.replicas, with the API default of 1 for nil.
	replicas() int
	minReadySeconds() int32
	template() *v1.PodTemplateSpec
	// selector converts the kind's selector; an error means the object is
	// malformed and must not be synced.
	selector() (labels.Selector, error)
	// readiness reports status.readyReplicas and status.availableReplicas.
	readiness() (ready, available int32)
}

// replicasOrDefault applies the API default of one replica to a nil
// spec.replicas, which only objects that bypassed defaulting can have.
func replicasOrDefault(r *int32) int {
	if r == nil {
		return 1
	}
	return int(*r)
}

// replicaSet adapts an apps/v1 ReplicaSet.
type replicaSet struct{ *appsv1.ReplicaSet }

func (r replicaSet) object() runtime.Object        { return r.ReplicaSet }
func (r replicaSet) replicas() int                 { return replicasOrDefault(r.Spec.Replicas) }
func (r replicaSet) minReadySeconds() int32        { return r.Spec.MinReadySeconds }
func (r replicaSet) template() *v1.PodTemplateSpec { return &r.Spec.Template }
func (r replicaSet) readiness() (ready, avail int32) {
	return r.Status.ReadyReplicas, r.Status.AvailableReplicas
}

// selector converts the LabelSelector. A nil selector is refused: the API
// requires one, and converting nil would select nothing and then create
// pods forever.
func (r replicaSet) selector() (labels.Selector, error) {
	if r.Spec.Selector == nil {
		return nil, errNilSelector
	}
	return metav1.LabelSelectorAsSelector(r.Spec.Selector)
}

// replicationController adapts a core/v1 ReplicationController, whose
// selector is a plain equality map and whose template is a pointer.
type replicationController struct{ *v1.ReplicationController }

func (r replicationController) object() runtime.Object { return r.ReplicationController }
func (r replicationController) replicas() int          { return replicasOrDefault(r.Spec.Replicas) }
func (r replicationController) minReadySeconds() int32 { return r.Spec.MinReadySeconds }
func (r replicationController) readiness() (ready, avail int32) {
	return r.Status.ReadyReplicas, r.Status.AvailableReplicas
}

// template returns an empty template rather than nil for an RC that has
// none, so callers never dereference nil; creating from it then fails in
// pod control ("no labels"), which is the error the user should see.
func (r replicationController) template() *v1.PodTemplateSpec {
	if r.Spec.Template == nil {
		return &v1.PodTemplateSpec{}
	}
	return r.Spec.Template
}

// selector is an equality selector. An empty map is refused: it would match
// every pod in the namespace, which the API server forbids for RCs.
func (r replicationController) selector() (labels.Selector, error) {
	if len(r.Spec.Selector) == 0 {
		return nil, errNilSelector
	}
	return labels.ValidatedSelectorFromSet(r.Spec.Selector)
}
