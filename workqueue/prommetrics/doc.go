// Package prommetrics exports the metrics of ctrlkit's (or client-go's)
// work queues to Prometheus under the standard names: workqueue_depth,
// workqueue_adds_total, workqueue_queue_duration_seconds,
// workqueue_work_duration_seconds, workqueue_unfinished_work_seconds,
// workqueue_longest_running_processor_seconds and workqueue_retries_total,
// each labelled by the queue's name, with component-base's buckets.
//
// Build a Provider on the registry you serve and hand it to each queue with
// a distinct name:
//
//	p, err := prommetrics.NewProvider(registry)
//	q := workqueue.NewRateLimiting(rl, workqueue.WithName("replicaset"), workqueue.WithMetricsProvider(p))
//
// It is ctrlkit's one Prometheus adapter, so the controller's other
// figures are here too: NewControllerMetrics records a set controller's
// syncs (named as controller-runtime's controller_runtime_reconcile_*),
// upstream's replicaset_controller_sorting_deletion_age_ratio and the pods
// it wrote, and RegisterRunner publishes a shard.Runner's share, hand-overs
// and caches as ctrlkit_shard_*.
//
// Nothing is registered globally. Providers built on the same registry share
// its metrics, so several queues, or several components each building their
// own provider, never collide. The package lives apart from workqueue, shard
// and the set core so that importing them does not pull in the Prometheus
// client.
package prommetrics
