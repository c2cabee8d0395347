package main

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/workqueue/prommetrics"
)

// controllerMetrics is the binary's Prometheus registry: the work queue's
// metrics (workqueue/prommetrics), sync outcomes named after
// controller-runtime's controller_runtime_reconcile_* family, upstream's
// replicaset_controller_sorting_deletion_age_ratio, and the pods the
// controller created and deleted (ctrlkit_controller_pods_{created,deleted}_total,
// see podWriteCounter), and the Go runtime's and process's standard go_* and
// process_* families. It implements replicaset.Metrics.
type controllerMetrics struct {
	registry   *prometheus.Registry
	queue      *prommetrics.Provider
	syncs      *prometheus.CounterVec
	syncErrors *prometheus.CounterVec
	syncTime   *prometheus.HistogramVec
	ageRatio   prometheus.Histogram
	// Counted by podWriteCounter from the controller's pod events.
	podsCreated *prometheus.CounterVec
	podsDeleted *prometheus.CounterVec
}

func newControllerMetrics() (*controllerMetrics, error) {
	reg := prometheus.NewRegistry()
	queue, err := prommetrics.NewProvider(reg)
	if err != nil {
		return nil, fmt.Errorf("work queue metrics: %w", err)
	}
	m := &controllerMetrics{
		registry: reg,
		queue:    queue,
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_total",
			Help: "Total number of syncs per controller and result (success, requeue or error).",
		}, []string{"controller", "result"}),
		syncErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_errors_total",
			Help: "Total number of syncs per controller that returned an error.",
		}, []string{"controller"}),
		syncTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "controller_runtime_reconcile_time_seconds",
			Help:    "Length of time per sync per controller.",
			Buckets: prometheus.DefBuckets,
		}, []string{"controller"}),
		// Name, help and buckets are upstream's, so dashboards built for
		// kube-controller-manager read this binary too.
		ageRatio: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "replicaset_controller",
			Name:      "sorting_deletion_age_ratio",
			Help: "The ratio of chosen deleted pod's ages to the current youngest pod's age (at the time). Should be <2. " +
				"The intent of this metric is to measure the rough efficacy of the LogarithmicScaleDown feature gate's effect on " +
				"the sorting (and deletion) of pods when a replicaset scales down. This only considers Ready pods when calculating and reporting.",
			Buckets: prometheus.ExponentialBuckets(0.25, 2, 6),
		}),
		// Neither upstream nor controller-runtime has a pod-write metric,
		// hence ctrlkit's own prefix.
		podsCreated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ctrlkit_controller_pods_created_total",
			Help: "Total number of pods the controller created, per controller.",
		}, []string{"controller"}),
		podsDeleted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ctrlkit_controller_pods_deleted_total",
			Help: "Total number of pods the controller deleted, per controller.",
		}, []string{"controller"}),
	}
	// The Go runtime's and the process's own families (go_*, process_*),
	// as every Prometheus-instrumented Go binary serves them: heap and CPU
	// are what sharding over replicas is meant to divide.
	goRuntime := collectors.NewGoCollector()
	process := collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})
	for _, c := range []prometheus.Collector{m.syncs, m.syncErrors, m.syncTime, m.ageRatio, m.podsCreated, m.podsDeleted, goRuntime, process} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Sync results, the values of controller_runtime_reconcile_total's result
// label. "requeue" is controller-runtime's value for a reconcile that asked
// to be retried without failing.
const (
	syncSucceeded = "success"
	syncRequeued  = "requeue"
	syncFailed    = "error"
)

// syncResult sorts a sync's outcome. A sync that found the informer cache
// behind the controller's own writes (consistency.ErrStaleCache) did nothing
// wrong: it waits for the cache and is requeued, so it is no failure.
func syncResult(err error) string {
	switch {
	case err == nil:
		return syncSucceeded
	case consistency.IsStaleCache(err):
		return syncRequeued
	default:
		return syncFailed
	}
}

// ObserveSync counts one sync of kind (the controller label is the kind in
// lower case, as --kind spells it) by result, and its duration. Only real
// failures count in controller_runtime_reconcile_errors_total.
func (m *controllerMetrics) ObserveSync(kind string, took time.Duration, err error) {
	controller := controllerLabel(kind)
	result := syncResult(err)
	if result == syncFailed {
		m.syncErrors.WithLabelValues(controller).Inc()
	}
	m.syncs.WithLabelValues(controller, result).Inc()
	m.syncTime.WithLabelValues(controller).Observe(took.Seconds())
}

// resetQueueGauges zeroes the work queue's gauges once a ring epoch's
// controller has stopped: a queue shut down at once keeps its items, and
// with them its depth, while the next epoch's queue starts empty and
// publishes under the same name.
func (m *controllerMetrics) resetQueueGauges(kind string) {
	name := kinds[kind].queue
	for _, g := range []any{m.queue.NewDepthMetric(name), m.queue.NewUnfinishedWorkSecondsMetric(name), m.queue.NewLongestRunningProcessorSecondsMetric(name)} {
		if s, ok := g.(interface{ Set(float64) }); ok {
			s.Set(0)
		}
	}
}

// ObserveDeletionAgeRatio records one Ready victim's age ratio.
func (m *controllerMetrics) ObserveDeletionAgeRatio(r float64) { m.ageRatio.Observe(r) }

// handler serves the registry in the Prometheus exposition format.
func (m *controllerMetrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

func controllerLabel(kind string) string {
	if kind == "ReplicationController" {
		return kindReplicationController
	}
	return kindReplicaSet
}
