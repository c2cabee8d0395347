// Package process runs a client-go controller as a process: it turns the
// first SIGINT or SIGTERM into a drain and the second into an immediate
// stop (Signals), runs the controller only while it holds a leader Lease
// and releases the Lease only once the controller stopped (RunWithLease),
// serves /healthz and /readyz on the probes' port and /metrics with Go's
// profiles on another (Serve, HealthHandler, MetricsHandler), checks before
// starting that the API server answers and grants every permission the
// controller needs (Preflight), and keeps requests, Lease calls and watches
// on clients of their own (NewClients), and starts the event recorder a
// binary may want to wrap (StartEvents).
//
// None of this is about one kind of controller, and none of it fits a
// feature package: shard spreads work over replicas, this package hosts the
// work of one. It imports no other ctrlkit package and no metrics library;
// the metrics handler is the caller's (workqueue/prommetrics serves one).
package process
