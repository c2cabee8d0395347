package history

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/claim"
)

// ControllerRevisionControllerIndex is the name of the index that files
// ControllerRevisions under their controller (or, for orphans, under their
// namespace). It is upstream's name, so one index serves both.
const ControllerRevisionControllerIndex = "controllerRevisionController"

// ControllerRevisionControllerIndexKey returns the index key of revisions in
// namespace controlled by ref: "namespace/kind/name/uid", or "namespace" for
// orphans (nil ref).
func ControllerRevisionControllerIndexKey(namespace string, ref *metav1.OwnerReference) string {
	return claim.ControllerIndexKey(namespace, ref)
}

// AddControllerRevisionControllerIndexer adds ControllerRevisionControllerIndex
// to informer unless it is already there (possibly added concurrently by
// another controller sharing the informer).
func AddControllerRevisionControllerIndexer(informer cache.SharedIndexInformer) error {
	return claim.AddControllerIndexer(informer, ControllerRevisionControllerIndex)
}
