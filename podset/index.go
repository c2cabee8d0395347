package podset

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/claim"
)

// PodControllerIndex is the name of the pod informer index that
// AddPodControllerIndexer registers: pods by their controllerRef, and
// orphans by namespace alone.
const PodControllerIndex = "ctrlkit.io/pod-controller"

// PodControllerIndexKey is the PodControllerIndex key for the pods controlled
// by ref in namespace, or for the namespace's orphans when ref is nil
// (claim.ControllerIndexKey).
func PodControllerIndexKey(namespace string, ref *metav1.OwnerReference) string {
	return claim.ControllerIndexKey(namespace, ref)
}

// AddPodControllerIndexer registers PodControllerIndex on a pod informer,
// unless it already has it (several controllers may share one pod informer).
// Call it before the informer starts.
func AddPodControllerIndexer(podInformer cache.SharedIndexInformer) error {
	return claim.AddControllerIndexer(podInformer, PodControllerIndex)
}

// FilterPodsByOwner returns the pods controlled by owner (of kind ownerKind)
// and, with includeOrphanedPods, every orphan in its namespace: exactly the
// pods a claim can keep, release or adopt. podIndexer must carry
// PodControllerIndex. An owner without namespace, name or UID, or an empty
// kind, is an error.
func FilterPodsByOwner(podIndexer cache.Indexer, owner metav1.Object, ownerKind string, includeOrphanedPods bool) ([]*v1.Pod, error) {
	switch {
	case owner.GetNamespace() == "":
		return nil, errors.New("no owner namespace provided")
	case owner.GetName() == "":
		return nil, errors.New("no owner name provided")
	case owner.GetUID() == "":
		return nil, errors.New("no owner uid provided")
	case ownerKind == "":
		return nil, errors.New("no owner kind provided")
	}
	ref := &metav1.OwnerReference{Kind: ownerKind, Name: owner.GetName(), UID: owner.GetUID()}
	keys := []string{PodControllerIndexKey(owner.GetNamespace(), ref)}
	if includeOrphanedPods {
		keys = append(keys, PodControllerIndexKey(owner.GetNamespace(), nil))
	}
	var pods []*v1.Pod
	for _, key := range keys {
		objs, err := podIndexer.ByIndex(PodControllerIndex, key)
		if err != nil {
			return nil, fmt.Errorf("reading pod index: %w", err)
		}
		if pods == nil {
			pods = make([]*v1.Pod, 0, len(objs))
		}
		for _, obj := range objs {
			pod, ok := obj.(*v1.Pod)
			if !ok {
				utilruntime.HandleError(fmt.Errorf("unexpected object type in pod indexer: %T", obj))
				continue
			}
			pods = append(pods, pod)
		}
	}
	return pods, nil
}

// podsForOwner is FilterPodsByOwner with the orphans, for a sync.
func (c *Reconciler[O]) podsForOwner(o O) ([]*v1.Pod, error) {
	return FilterPodsByOwner(c.podIndexer, o, c.gvk.Kind, true)
}
