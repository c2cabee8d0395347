// Package expectations is a TTL cache of the creations and deletions a
// controller has asked the API server for but not yet seen through its
// informers. A controller checks it before syncing an owner, so that it never
// acts twice on the same stale cache.
//
// It replaces ControllerExpectations and UIDTrackingControllerExpectations
// from k8s.io/kubernetes/pkg/controller with the same method names and the
// same answers, minus the logger argument (see WithLogger). The sync sets
// expectations before it writes; the informer handlers observe:
//
//	exp := expectations.NewControllerExpectations()
//
//	// syncReplicaSet
//	key := expectations.OwnerKeyFor(rs)
//	if !exp.SatisfiedExpectations(key) {
//		return nil // an informer event will requeue the owner
//	}
//	_ = exp.ExpectCreations(key, diff)
//
//	// addPod handler
//	ref := metav1.GetControllerOf(pod)
//	exp.CreationObserved(expectations.OwnerKeyForRef(pod.Namespace, ref))
//
// Key records with OwnerKey (or OwnerKeyFor, OwnerKeyForRef) and keep the
// plain "namespace/name" as the workqueue key: the key then carries the
// owner's UID, so an owner deleted and re-created under the same name never
// waits on its predecessor's record (kubernetes#142142). An owner that waits
// for several kinds of dependents keeps one record per scope: a constant
// scope is a Scope made once with MustScope, whose KeyFor cannot fail, and
// a scope read from data goes through OwnerScopeKeyFor, which returns an
// error. Never append text to an owner key; ParseOwnerKey refuses it.
//
// A record that has waited longer than the TTL (ExpectationsTimeout unless
// WithTTL says otherwise) no longer holds its owner back. Expired records are
// evicted when read and by a sweep that writes pay for, so memory follows the
// live owners; there is no goroutine. ExpectCreationsNamed tracks creations by
// name, and Pending and PendingAll say what an owner still waits for.
package expectations
