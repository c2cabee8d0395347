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
package ctrlruntime
