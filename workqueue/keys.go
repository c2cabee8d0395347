package workqueue

import (
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/internal/ownerkey"
)

// ctrlkit has no catch-all controller package like upstream's
// pkg/controller; the two helpers below feed a work queue (its keys) and the
// informers in front of it (their resync period), so they live beside the
// queue.

// Key returns the work-queue key of the object called name in namespace:
// "namespace/name", or "name" for a cluster-scoped object (an empty
// namespace). It is the key KeyFunc returns for such an object, and the one
// every ctrlkit queue and Observe method uses.
func Key(namespace, name string) string {
	return ownerkey.Join(namespace, name, "")
}

// KeyFunc returns the work-queue key of an informer object, "namespace/name"
// or "name" for a cluster-scoped object. A cache.DeletedFinalStateUnknown
// tombstone, which a delete handler receives when the watch missed the
// deletion, gives the key it carries. It is upstream's controller.KeyFunc,
// client-go's cache.DeletionHandlingMetaNamespaceKeyFunc; an object without
// metadata is an error, never a panic.
func KeyFunc(obj any) (string, error) {
	return cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
}

// NoResyncPeriodFunc returns 0, the resync period that turns periodic
// resyncs off (upstream's controller.NoResyncPeriodFunc). Controllers driven
// by expectations and level-triggered syncs don't need them: every change
// already queues the owner.
func NoResyncPeriodFunc() time.Duration {
	return 0
}
