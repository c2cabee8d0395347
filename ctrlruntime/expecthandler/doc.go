// Package expecthandler brings ctrlkit's expectations to controller-runtime
// controllers, so a controller that creates or deletes objects never acts
// twice on a cache that has not caught up with its own writes.
//
// A Tracker holds one controller's expectations, keyed by each owner's
// namespace, name and UID (expectations.OwnerKey), so a re-created owner
// never inherits its predecessor's record. Its Handler watches the owned
// kind (pods, usually): it records every creation and deletion it observes
// against the owner named by the object's controller reference and enqueues
// that owner. Reconcile asks Satisfied before it trusts the cache, and calls
// ExpectCreations or ExpectDeletions before it writes:
//
//	if !tracker.Satisfied(owner) {
//		return reconcile.Result{}, nil // the handler requeues when the cache catches up
//	}
//	// list the owned objects from the cache, compute diff, then:
//	tracker.ExpectCreations(owner, diff)
//	// each create that fails or is skipped: tracker.CreationFailed(owner)
//
// The handler follows upstream's ReplicaSet controller: a create event of an
// object already being deleted counts as a deletion, an update that sets the
// deletion timestamp counts as the deletion, updates that change nothing
// (resyncs) are ignored, and a controller reference that moves enqueues both
// owners. Deletions are tracked by object key, so an object observed twice
// lowers the count once.
//
// A controller that names what it creates calls ExpectCreationsNamed
// instead of ExpectCreations (and CreationFailedNamed for a failed create):
// the handler then counts only the expected names, each once.
//
// The Handler ignores orphans. OrphanHandler, watching the same kind, lets
// owners adopt them: for an object without a controller reference it
// enqueues every owner in its namespace whose selector matches its labels.
package expecthandler
