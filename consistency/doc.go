// Package consistency is a read-your-writes guard for controllers: it holds
// back a sync of an owner until the informer caches have caught up with the
// objects the controller itself last wrote for that owner. It is the idea of
// upstream's ConsistencyStore (Kubernetes 1.36, KEP-5647), which
// kube-controller-manager keeps internal, with owner UIDs and a TTL.
//
// Expectations count creations and deletions, whose arrival an event handler
// can see; an update that reaches the cache late looks like no update at all,
// so a controller syncing from a stale cache may repeat or undo its own work.
// The guard closes that gap using the resource version every client-go
// store reports through LastStoreSyncResourceVersion from v0.36 on. With an
// older client-go (Kubernetes 1.34 and 1.35) no store reports one: nothing is
// registered, the guard records nothing, and a sync proceeds as upstream's
// did before the guard existed (expectations alone, as in 1.34).
//
// Register the informer stores once, record each write's resource version
// with WroteAt, and call EnsureReady first thing in the sync:
//
//	guard := consistency.NewGuard(
//		consistency.WithStore(schema.GroupResource{Resource: "pods"}, podInformer.GetStore()))
//
//	func (c *Controller) sync(ctx context.Context, key string) error {
//		if err := c.guard.EnsureReady(key); err != nil {
//			return err // requeue; errors.Is(err, consistency.ErrStaleCache)
//		}
//		pod, err := c.client.CoreV1().Pods(ns).Create(ctx, newPod, metav1.CreateOptions{})
//		if err == nil {
//			c.guard.WroteAt(key, podsGR, pod.ResourceVersion)
//		}
//		...
//	}
//
// and call Clear from the owner's delete handler. The guard starts no
// goroutine and is safe for concurrent use.
package consistency
