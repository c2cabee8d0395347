package claim

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RecheckDeletionTimestamp returns a CanAdoptFunc that fetches the latest
// controller with getObject and refuses adoption if it is being deleted.
// Informer caches can lag behind a deletion; a fresh read prevents a dying
// controller from adopting objects that the garbage collector would then
// delete with it.
func RecheckDeletionTimestamp(getObject func(context.Context) (metav1.Object, error)) func(context.Context) error {
	return func(ctx context.Context) error {
		obj, err := getObject(ctx)
		if err != nil {
			return fmt.Errorf("can't recheck DeletionTimestamp: %w", err)
		}
		if ts := obj.GetDeletionTimestamp(); ts != nil {
			return fmt.Errorf("%v/%v has just been deleted at %v", obj.GetNamespace(), obj.GetName(), ts)
		}
		return nil
	}
}
