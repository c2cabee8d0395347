package claim

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	productionLabel    = map[string]string{"type": "production"}
	testingLabel       = map[string]string{"type": "testing"}
	productionSelector = labels.Set(productionLabel).AsSelector()
	fakeKind           = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Fake"}
	deployKind         = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	podGR              = schema.GroupResource{Resource: "pods"}
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

// newPod returns a pod in namespace "default" (unless ns given via withNS),
// owned by owner when not nil.
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

func withNS(p *v1.Pod, ns string) *v1.Pod { p.Namespace = ns; return p }

func deleting(p *v1.Pod) *v1.Pod {
	now := metav1.Now()
	p.DeletionTimestamp = &now
	return p
}

func notFound(name string) error { return apierrors.NewNotFound(podGR, name) }

func invalid(name string) error {
	return apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, name, field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), name, "immutable")})
}

// fakePodPatcher records the pod patches a ref manager sends and answers
// each with PatchErr.
type fakePodPatcher struct {
	sync.Mutex
	Patches     [][]byte
	PatchedPods []string
	PatchErr    error
}

func (f *fakePodPatcher) PatchPod(_ context.Context, namespace, name string, data []byte) error {
	f.Lock()
	defer f.Unlock()
	f.Patches = append(f.Patches, append([]byte(nil), data...))
	f.PatchedPods = append(f.PatchedPods, namespace+"/"+name)
	return f.PatchErr
}
