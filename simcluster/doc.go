// Package simcluster is an in-memory cluster for unit tests and demos: a
// client-go fake clientset that behaves like an apiserver where controllers
// care, plus an optional simulated scheduler and kubelet.
//
// The API (Cluster.Client) is client-go's *fake.Clientset, so reactors and
// recorded actions work as usual, with what the bare fake lacks:
//   - creations get a name from metadata.generateName, a UID, a creation
//     timestamp and a resourceVersion;
//   - every write takes the next resourceVersion of one cluster-wide counter,
//     and an update carrying a stale resourceVersion fails with a Conflict;
//   - lists carry the current resourceVersion and watches resume from one
//     (410 Gone past the last 10,000 events, so informers relist);
//   - watches never drop an event and never panic, however far a reader falls
//     behind (client-go's fake watcher panics at 100 unread events);
//   - an object with more than one controller owner reference is refused
//     with 422 Invalid on metadata.ownerReferences, on create, update, patch
//     and Cluster.Add alike, as the apiserver's metadata validation does.
//
// HoldWatches makes a test's informer cache lag: the watch events of one
// resource wait until the release while writes and direct reads go on, and
// an informer that relists meanwhile sees the state from before the hold.
// WithScheme stores custom resources too, and Tracker shares the store with
// another fake client (ctrlruntime/simkit builds controller-runtime's cache
// and client over it).
//
// Run starts the scheduler, which binds each new pod to a node, and the
// kubelet, which marks bound pods Running and Ready after a startup delay;
// WithScheduler and WithKubelet turn either off, WithClock puts a fake clock
// behind the delay and every timestamp.
//
// It is the recommended way to unit-test a controller built on ctrlkit: build
// the controller on Cluster.Client() and informers from it, seed objects with
// Cluster.Add, run Cluster.Run beside the controller when pods should become
// ready, and assert on the objects (or on Client().Actions() for API calls).
// Tests stay fast and deterministic, and the same controller code runs
// unchanged against a real apiserver.
//
// It is not an apiserver: there is no admission, other validation, defaulting,
// server-side apply, field or label selection on watches, graceful deletion
// (a deleted pod disappears at once) or garbage collection.
package simcluster
