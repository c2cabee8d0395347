package replicaset

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/status"
)

// ReplicationControllerKind is the podset.Kind of core/v1
// ReplicationControllers, named like upstream's ReplicationManager. An RC's
// selector is an equality map, its template a pointer, and its status has no
// terminatingReplicas.
type ReplicationControllerKind struct {
	client  kubernetes.Interface
	lister  corelisters.ReplicationControllerLister
	indexer cache.Indexer
}

// NewReplicationControllerKind returns the ReplicationController kind over
// an informer, adding the controller-UID index its Siblings method reads.
func NewReplicationControllerKind(client kubernetes.Interface, inf coreinformers.ReplicationControllerInformer) (*ReplicationControllerKind, error) {
	if err := addOwnerControllerIndex(inf.Informer()); err != nil {
		return nil, err
	}
	return &ReplicationControllerKind{client: client, lister: inf.Lister(), indexer: inf.Informer().GetIndexer()}, nil
}

// GroupVersionKind is v1 ReplicationController.
func (*ReplicationControllerKind) GroupVersionKind() schema.GroupVersionKind {
	return v1.SchemeGroupVersion.WithKind("ReplicationController")
}

// Replicas is spec.replicas, or the API default of 1 when it is nil.
func (*ReplicationControllerKind) Replicas(rc *v1.ReplicationController) int32 {
	return replicasOrDefault(rc.Spec.Replicas)
}

// Selector is an equality selector. An empty map takes the template's
// labels, as the API server defaults it; with no template labels either it
// is refused, as it would match every pod of the namespace.
func (*ReplicationControllerKind) Selector(rc *v1.ReplicationController) (labels.Selector, error) {
	set := rc.Spec.Selector
	if len(set) == 0 && rc.Spec.Template != nil {
		set = rc.Spec.Template.Labels
	}
	if len(set) == 0 {
		return nil, errEmptySelector
	}
	return labels.ValidatedSelectorFromSet(set)
}

// Template returns an empty template rather than nil for an RC that has
// none; creating from it then fails in pod control ("no labels"), which is
// the error the user should see.
func (*ReplicationControllerKind) Template(rc *v1.ReplicationController) *v1.PodTemplateSpec {
	if rc.Spec.Template == nil {
		return &v1.PodTemplateSpec{}
	}
	return rc.Spec.Template
}

// MinReadySeconds is spec.minReadySeconds.
func (*ReplicationControllerKind) MinReadySeconds(rc *v1.ReplicationController) int32 {
	return rc.Spec.MinReadySeconds
}

// Get reads the lister.
func (k *ReplicationControllerKind) Get(namespace, name string) (*v1.ReplicationController, error) {
	return k.lister.ReplicationControllers(namespace).Get(name)
}

// GetUncached reads the API server.
func (k *ReplicationControllerKind) GetUncached(ctx context.Context, namespace, name string) (*v1.ReplicationController, error) {
	return k.client.CoreV1().ReplicationControllers(namespace).Get(ctx, name, metav1.GetOptions{})
}

// UpdateStatus writes the status with the status package; terminating pods
// are not counted, as an RC's status has no field for them. A spec the sync
// refused (in.SpecErr) becomes a ReplicaFailure condition with the
// refusal's reason.
func (k *ReplicationControllerKind) UpdateStatus(ctx context.Context, rc *v1.ReplicationController, in podset.StatusInput) (*v1.ReplicationController, error) {
	st := status.CalculateReplicationControllerStatus(rc, in.Active, failure(in), in.Now)
	if in.SpecErr != nil {
		status.SetReplicationControllerCondition(&st, v1.ReplicationControllerCondition{Type: v1.ReplicationControllerReplicaFailure,
			Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(in.Now), Reason: in.SpecErr.Reason, Message: in.SpecErr.Error()})
	}
	return status.UpdateReplicationControllerStatus(ctx, k.client.CoreV1().ReplicationControllers(rc.Namespace), rc, st)
}

// Siblings lists the cached RCs controlled by rc's controller, rc included.
func (k *ReplicationControllerKind) Siblings(rc *v1.ReplicationController) ([]*v1.ReplicationController, error) {
	return siblings[*v1.ReplicationController](k.indexer, rc)
}
