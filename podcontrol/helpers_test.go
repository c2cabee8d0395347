package podcontrol

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var (
	productionLabel = map[string]string{"type": "production"}
	fakeKind        = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Fake"}
	podGR           = schema.GroupResource{Resource: "pods"}
)

// controller returns an RC-like owner in namespace ns with uid.
func controller(ns string, uid types.UID, deleting bool) *v1.ReplicationController {
	c := &v1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: ns, UID: uid}}
	if deleting {
		now := metav1.Now()
		c.DeletionTimestamp = &now
	}
	return c
}

// newPod returns a pod in namespace "default", owned by owner when not nil.
func newPod(name string, lbls map[string]string, owner metav1.Object) *v1.Pod {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, Labels: lbls, UID: types.UID("uid-" + name)},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "foo/bar"}}},
	}
	if owner != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, fakeKind)}
	}
	return pod
}
