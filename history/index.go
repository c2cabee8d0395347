package history

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// ControllerRevisionControllerIndex is the name of the index that files
// ControllerRevisions under their controller (or, for orphans, under their
// namespace). It is upstream's name, so one index serves both.
const ControllerRevisionControllerIndex = "controllerRevisionController"

// ControllerRevisionControllerIndexKey returns the index key of revisions in
// namespace controlled by ref: "namespace/kind/name/uid", or "namespace" for
// orphans (nil ref).
func ControllerRevisionControllerIndexKey(namespace string, ref *metav1.OwnerReference) string {
	if ref == nil {
		return namespace
	}
	return namespace + "/" + ref.Kind + "/" + ref.Name + "/" + string(ref.UID)
}

// AddControllerRevisionControllerIndexer adds ControllerRevisionControllerIndex
// to informer unless it is already there (possibly added concurrently by
// another controller sharing the informer).
func AddControllerRevisionControllerIndexer(informer cache.SharedIndexInformer) error {
	if hasRevisionIndex(informer) {
		return nil
	}
	err := informer.AddIndexers(cache.Indexers{ControllerRevisionControllerIndex: revisionIndexFunc})
	if err != nil && hasRevisionIndex(informer) {
		return nil
	}
	return err
}

func hasRevisionIndex(informer cache.SharedIndexInformer) bool {
	_, ok := informer.GetIndexer().GetIndexers()[ControllerRevisionControllerIndex]
	return ok
}

func revisionIndexFunc(obj any) ([]string, error) {
	cr, ok := obj.(*appsv1.ControllerRevision)
	if !ok {
		return nil, nil
	}
	return []string{ControllerRevisionControllerIndexKey(cr.Namespace, metav1.GetControllerOfNoCopy(cr))}, nil
}
