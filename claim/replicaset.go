package claim

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// ReplicaSetControllerRefManager is the ref manager a Deployment-like
// controller uses for its ReplicaSets: an
// ObjectControllerRefManager[*appsv1.ReplicaSet] with upstream's method names.
type ReplicaSetControllerRefManager struct {
	ObjectControllerRefManager[*appsv1.ReplicaSet]
}

// NewReplicaSetControllerRefManager returns a ref manager for the
// ReplicaSets of controller. patcher is typically NewReplicaSetPatcher.
func NewReplicaSetControllerRefManager(patcher Patcher, controller metav1.Object, selector labels.Selector,
	controllerKind schema.GroupVersionKind, canAdopt func(context.Context) error, opts ...ManagerOption) *ReplicaSetControllerRefManager {
	opts = append([]ManagerOption{WithKind("ReplicaSet")}, opts...)
	m := &ReplicaSetControllerRefManager{}
	m.init(patcher, controller, selector, controllerKind, canAdopt, opts...)
	return m
}

// ClaimReplicaSets adopts matching orphan ReplicaSets, releases owned ones
// that no longer match, and returns those owned afterwards in input order.
func (m *ReplicaSetControllerRefManager) ClaimReplicaSets(ctx context.Context, sets []*appsv1.ReplicaSet) ([]*appsv1.ReplicaSet, error) {
	return m.Claim(ctx, sets)
}

// AdoptReplicaSet patches rs to make the controller its managing owner.
func (m *ReplicaSetControllerRefManager) AdoptReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet) error {
	return m.Adopt(ctx, rs)
}

// ReleaseReplicaSet patches rs to drop the controller's owner reference.
// NotFound and Invalid errors are ignored.
func (m *ReplicaSetControllerRefManager) ReleaseReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet) error {
	return m.Release(ctx, rs)
}

// NewReplicaSetPatcher returns a Patcher that sends strategic-merge patches
// to apps/v1 ReplicaSets through client.
func NewReplicaSetPatcher(client kubernetes.Interface) Patcher {
	return PatcherFunc(func(ctx context.Context, namespace, name string, data []byte) error {
		_, err := client.AppsV1().ReplicaSets(namespace).Patch(ctx, name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
		return err
	})
}
