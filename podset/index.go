package podset

import (
	"errors"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	ref, err := controllerRefTo(owner, ownerKind)
	if err != nil {
		return nil, err
	}
	pods, err := claim.AppendByIndex[*v1.Pod](nil, podIndexer, PodControllerIndex, PodControllerIndexKey(owner.GetNamespace(), ref))
	if err != nil || !includeOrphanedPods {
		return pods, err
	}
	return claim.AppendByIndex(pods, podIndexer, PodControllerIndex, PodControllerIndexKey(owner.GetNamespace(), nil))
}

// controllerRefTo is the controller reference a pod of owner carries, or
// an error for an owner that cannot have one.
func controllerRefTo(owner metav1.Object, ownerKind string) (*metav1.OwnerReference, error) {
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
	return &metav1.OwnerReference{Kind: ownerKind, Name: owner.GetName(), UID: owner.GetUID()}, nil
}

// podsForOwner is FilterPodsByOwner with the orphans, for a sync, through
// the owner's kept listings: on an owner none of whose pods, and no orphan
// of whose namespace, changed since its last sync, it reads no pod from
// the store (claim.IndexListing).
func (c *Reconciler[O]) podsForOwner(o O) ([]*v1.Pod, error) {
	ref, err := controllerRefTo(o, c.gvk.Kind)
	if err != nil {
		return nil, err
	}
	l := c.memos.listing(ownerKey(o), o.GetUID())
	pods, err := l.owned.AppendTo(nil, c.podIndexer, PodControllerIndex, PodControllerIndexKey(o.GetNamespace(), ref))
	if err != nil {
		return nil, err
	}
	return l.orphans.AppendTo(pods, c.podIndexer, PodControllerIndex, PodControllerIndexKey(o.GetNamespace(), nil))
}
