package replicaset

import (
	"context"
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/status"
)

var (
	errNoSelector    = errors.New("selector is missing")
	errEmptySelector = errors.New("selector is empty: it would select every pod of the namespace")
)

// ReplicaSetKind is the podset.Kind of apps/v1 ReplicaSets, named like
// upstream's ReplicaSet controller. It also lists sibling ReplicaSets (those
// of the same Deployment) for ranking scale-downs.
type ReplicaSetKind struct {
	client  kubernetes.Interface
	lister  appslisters.ReplicaSetLister
	indexer cache.Indexer
}

// NewReplicaSetKind returns the ReplicaSet kind over an informer, adding the
// controller-UID index its Siblings method reads.
func NewReplicaSetKind(client kubernetes.Interface, inf appsinformers.ReplicaSetInformer) (*ReplicaSetKind, error) {
	if err := addOwnerControllerIndex(inf.Informer()); err != nil {
		return nil, err
	}
	return &ReplicaSetKind{client: client, lister: inf.Lister(), indexer: inf.Informer().GetIndexer()}, nil
}

// GroupVersionKind is apps/v1 ReplicaSet.
func (*ReplicaSetKind) GroupVersionKind() schema.GroupVersionKind {
	return appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
}

// Replicas is spec.replicas, or the API default of 1 when it is nil.
func (*ReplicaSetKind) Replicas(rs *appsv1.ReplicaSet) int32 {
	return replicasOrDefault(rs.Spec.Replicas)
}

// Selector converts spec.selector. A nil or empty selector is refused, as
// the API's validation refuses it: converting nil would select nothing and
// create pods forever, and an empty one would adopt every pod of the
// namespace.
func (*ReplicaSetKind) Selector(rs *appsv1.ReplicaSet) (labels.Selector, error) {
	if rs.Spec.Selector == nil {
		return nil, errNoSelector
	}
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return nil, err
	}
	if sel.Empty() {
		return nil, errEmptySelector
	}
	return sel, nil
}

// Template is spec.template.
func (*ReplicaSetKind) Template(rs *appsv1.ReplicaSet) *v1.PodTemplateSpec { return &rs.Spec.Template }

// MinReadySeconds is spec.minReadySeconds.
func (*ReplicaSetKind) MinReadySeconds(rs *appsv1.ReplicaSet) int32 { return rs.Spec.MinReadySeconds }

// Get reads the lister.
func (k *ReplicaSetKind) Get(namespace, name string) (*appsv1.ReplicaSet, error) {
	return k.lister.ReplicaSets(namespace).Get(name)
}

// GetUncached reads the API server.
func (k *ReplicaSetKind) GetUncached(ctx context.Context, namespace, name string) (*appsv1.ReplicaSet, error) {
	return k.client.AppsV1().ReplicaSets(namespace).Get(ctx, name, metav1.GetOptions{})
}

// UpdateStatus writes the status with the status package, with
// terminatingReplicas when the gate asks for it. A spec the sync refused
// (in.SpecErr) becomes a ReplicaFailure condition with the refusal's reason.
// The cached object is not deep-copied, unlike upstream: the status package
// never writes to its input.
func (k *ReplicaSetKind) UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet, in podset.StatusInput) (*appsv1.ReplicaSet, error) {
	var opts []status.Option
	if in.TerminatingReplicas {
		opts = append(opts, status.WithTerminatingReplicas())
	}
	// The sync may have counted the pods while it claimed them; Counts
	// counts them otherwise.
	opts = append(opts, status.WithReplicaCounts(in.Counts()))
	st := status.CalculateReplicaSetStatus(rs, in.Active, in.Terminating, failure(in), in.Now, opts...)
	if in.SpecErr != nil {
		status.SetCondition(&st, appsv1.ReplicaSetCondition{Type: appsv1.ReplicaSetReplicaFailure, Status: v1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(in.Now), Reason: in.SpecErr.Reason, Message: in.SpecErr.Error()})
	}
	return status.UpdateReplicaSetStatus(ctx, k.client.AppsV1().ReplicaSets(rs.Namespace), rs, st)
}

// Siblings lists the cached ReplicaSets controlled by rs's controller, rs
// included; a ReplicaSet without a controller has none.
func (k *ReplicaSetKind) Siblings(rs *appsv1.ReplicaSet) ([]*appsv1.ReplicaSet, error) {
	return siblings[*appsv1.ReplicaSet](k.indexer, rs)
}

// failure is the error the ReplicaFailure condition reports: the refused
// spec, or else the failed creations or deletions.
func failure(in podset.StatusInput) error {
	if in.SpecErr != nil {
		return in.SpecErr
	}
	return in.ManageErr
}

// replicasOrDefault applies the API default of one replica to a nil
// spec.replicas, which only objects that bypassed defaulting can have.
func replicasOrDefault(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}
