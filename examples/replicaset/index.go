package replicaset

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

const (
	// podControllerIndex indexes pods by their controllerRef, and orphans by
	// namespace alone. A sync reads its owner's pods plus the namespace's
	// orphans from it, instead of listing every pod in the namespace.
	podControllerIndex = "ctrlkit.io/pod-controller"
	// ownerControllerUIDIndex indexes owners by their own controller's UID
	// (a Deployment for ReplicaSets), to find the sibling owners whose pods
	// rank a scale-down.
	ownerControllerUIDIndex = "ctrlkit.io/owner-controller-uid"
)

// podIndexKey is the podControllerIndex key for pods controlled by ref in
// namespace, or for the namespace's orphans when ref is nil. The kind and name
// are part of the key so that a stale UID pointing at another kind never
// aliases our owner.
func podIndexKey(namespace string, ref *metav1.OwnerReference) string {
	if ref == nil {
		return namespace
	}
	return namespace + "/" + ref.Kind + "/" + ref.Name + "/" + string(ref.UID)
}

func indexPodByController(obj any) ([]string, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod == nil {
		return nil, nil
	}
	return []string{podIndexKey(pod.Namespace, metav1.GetControllerOfNoCopy(pod))}, nil
}

func indexOwnerByControllerUID(obj any) ([]string, error) {
	m, ok := obj.(metav1.Object)
	if !ok || m == nil {
		return nil, nil
	}
	ref := metav1.GetControllerOfNoCopy(m)
	if ref == nil {
		return nil, nil
	}
	return []string{string(ref.UID)}, nil
}

// addPodIndex registers the pod index unless the informer already has it,
// which happens when both kinds' controllers share one pod informer.
func addPodIndex(inf cache.SharedIndexInformer) error {
	return addIndex(inf, podControllerIndex, indexPodByController)
}

func addOwnerIndex(inf cache.SharedIndexInformer) error {
	return addIndex(inf, ownerControllerUIDIndex, indexOwnerByControllerUID)
}

func addIndex(inf cache.SharedIndexInformer, name string, fn cache.IndexFunc) error {
	if _, ok := inf.GetIndexer().GetIndexers()[name]; ok {
		return nil
	}
	if err := inf.AddIndexers(cache.Indexers{name: fn}); err != nil {
		return fmt.Errorf("adding index %q: %w", name, err)
	}
	return nil
}

// podsForOwner returns the pods controlled by o plus every orphan in its
// namespace: exactly the pods a claim can keep, release or adopt. Pods owned
// by another controller can never be claimed, so they are not read at all.
func (c *Controller) podsForOwner(o owner) ([]*v1.Pod, error) {
	gvk := c.kind.groupVersionKind()
	ref := &metav1.OwnerReference{Kind: gvk.Kind, Name: o.GetName(), UID: o.GetUID()}
	var pods []*v1.Pod
	for _, key := range []string{podIndexKey(o.GetNamespace(), ref), podIndexKey(o.GetNamespace(), nil)} {
		objs, err := c.podIndexer.ByIndex(podControllerIndex, key)
		if err != nil {
			return nil, fmt.Errorf("reading pod index: %w", err)
		}
		if pods == nil {
			pods = make([]*v1.Pod, 0, len(objs))
		}
		for _, obj := range objs {
			if pod, ok := obj.(*v1.Pod); ok {
				pods = append(pods, pod)
			}
		}
	}
	return pods, nil
}
