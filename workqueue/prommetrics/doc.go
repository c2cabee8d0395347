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
// Nothing is registered globally. Providers built on the same registry share
// its metrics, so several queues, or several components each building their
// own provider, never collide. The package lives apart from workqueue so that
// importing workqueue alone does not pull in the Prometheus client.
package prommetrics
