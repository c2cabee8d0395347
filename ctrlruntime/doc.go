// Package ctrlruntime puts ctrlkit's work queue into controller-runtime.
//
// NewQueue goes into controller.Options.NewQueue. The queue it builds is
// ctrlkit's rate-limiting priority queue, and it implements
// controller-runtime's priorityqueue.PriorityQueue, so controller-runtime
// uses it directly instead of wrapping it: the low priority its handlers give
// to the initial list and to resyncs, and the priority a reconcile.Result
// asks for, order the work. Its metrics are controller-runtime's standard
// workqueue series (workqueue_depth, workqueue_adds_total, ...) labelled with
// the controller's name, served on the manager's /metrics endpoint; the
// provider reuses the collectors controller-runtime registered in
// metrics.Registry, so nothing is registered twice.
//
// The sibling packages bring the rest of ctrlkit to controller-runtime:
// podsetcr (the whole podset controller for a custom resource, registered
// with the manager's builder as a plain reconcile.Reconciler), childsetcr (childset,
// children of any kind, registered the same way), expecthandler
// (expectations recorded by event handlers and checked by a hand-written
// Reconcile), crclient (PodControl and a claim patcher over client.Client),
// crhistory (ControllerRevision history over client.Client, for childset's
// rolling updates), simkit (a cache, client and manager over simcluster,
// whose watches a test can hold to make the cache lag) and shardcr (a set
// controller sharded over replicas: a Lease per replica, fenced reconciles,
// a cache that holds only the replica's share). requests.go is the one translation
// between ctrlkit's owner keys and results and controller-runtime's
// requests that they share.
//
// # Versions
//
// The module builds on controller-runtime v0.22 to v0.25 (Kubernetes 1.34
// to 1.37); its go.mod names the oldest, so importing it never moves an
// importer's controller-runtime. `make compat` runs its tests on the newest
// patch of each.
//
// # Read-your-writes
//
// controller-runtime v0.25 can make the manager's client wait, on each Get
// or List through it, until its cache has seen the writes that client made
// (client.CacheOptions.EnableReadYourWritesConsistency). ctrlkit's hosts do
// not rely on it, on any version, and it does not change what they do:
// they read children and owners from the manager's cache (mgr.GetCache()),
// which the option does not wrap, and their guard works per owner instead.
// A sync of an owner whose own writes the cache has not seen yet is put
// back on the queue with a short delay (podset's guard, on by default, and
// childset's, turned on by giving childset.WithReadYourWrites a guard), so
// no worker blocks on a read, and the wait is bounded by the guard's TTL where
// controller-runtime's is bounded only by the read's context. Turn the option on for your own reads
// through mgr.GetClient() if you want it; leave ctrlkit's guard as it is.
package ctrlruntime
