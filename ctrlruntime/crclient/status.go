package crclient

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// UpdateStatus writes owner's status as set leaves it on a copy, to the
// status subresource through writer, unless set changed nothing. It returns
// the owner as written, or owner itself when nothing changed; owner, the
// cached object, is never modified.
//
// Like upstream's ReplicaSet status update, a failed write is retried once,
// on the owner reread returns from the API server: a conflict with a write
// of someone else's is the usual cause, and set is applied to that fresher
// copy.
func UpdateStatus[O client.Object](ctx context.Context, writer client.StatusClient, owner O, set func(O), reread func(context.Context) (O, error)) (O, error) {
	var zero O
	namespace, name := owner.GetNamespace(), owner.GetName()
	for attempt := 0; ; attempt++ {
		next := owner.DeepCopyObject().(O) //nolint:forcetypeassert // a copy has the type of its original
		set(next)
		if equality.Semantic.DeepEqual(owner, next) {
			return owner, nil
		}
		err := writer.Status().Update(ctx, next)
		if err == nil {
			return next, nil
		}
		if attempt > 0 {
			return zero, fmt.Errorf("updating the status of %s/%s: %w", namespace, name, err)
		}
		if owner, err = reread(ctx); err != nil {
			return zero, fmt.Errorf("re-reading %s/%s for its status: %w", namespace, name, err)
		}
	}
}
