package main

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ctrlkit/ctrlkit/workqueue/prommetrics"
)

// controllerMetrics is the binary's Prometheus registry: the work queue's
// metrics (workqueue/prommetrics), sync outcomes named after
// controller-runtime's controller_runtime_reconcile_* family, upstream's
// replicaset_controller_sorting_deletion_age_ratio, and the pods the
// controller created and deleted (ctrlkit_controller_pods_{created,deleted}_total,
// see podWriteCounter). It implements replicaset.Metrics.
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
			Help: "Total number of syncs per controller and result (success or error).",
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
	for _, c := range []prometheus.Collector{m.syncs, m.syncErrors, m.syncTime, m.ageRatio, m.podsCreated, m.podsDeleted} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// ObserveSync counts one sync of kind (the controller label is the kind in
// lower case, as --kind spells it) and its duration.
func (m *controllerMetrics) ObserveSync(kind string, took time.Duration, err error) {
	controller := controllerLabel(kind)
	result := "success"
	if err != nil {
		result = "error"
		m.syncErrors.WithLabelValues(controller).Inc()
	}
	m.syncs.WithLabelValues(controller, result).Inc()
	m.syncTime.WithLabelValues(controller).Observe(took.Seconds())
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

// summary reads the registry back into one line for the demo's end: what an
// operator would see on /metrics, without a Prometheus server.
func (m *controllerMetrics) summary() string {
	families, err := m.registry.Gather()
	if err != nil {
		return "unreadable: " + err.Error()
	}
	sum := func(name string) float64 {
		var total float64
		for _, f := range families {
			if f.GetName() != name {
				continue
			}
			for _, s := range f.GetMetric() {
				switch {
				case s.Counter != nil:
					total += s.GetCounter().GetValue()
				case s.Histogram != nil:
					total += float64(s.GetHistogram().GetSampleCount())
				}
			}
		}
		return total
	}
	ratio := "none observed"
	for _, f := range families {
		if f.GetName() == "replicaset_controller_sorting_deletion_age_ratio" {
			h := f.GetMetric()[0].GetHistogram()
			if n := h.GetSampleCount(); n > 0 {
				ratio = fmt.Sprintf("%d observed, mean %.2f", n, h.GetSampleSum()/float64(n))
			}
		}
	}
	return fmt.Sprintf("%.0f syncs (%.0f failed), %.0f pods created, %.0f pods deleted, %.0f queue adds, %.0f retries, deletion-age ratio: %s",
		sum("controller_runtime_reconcile_total"), sum("controller_runtime_reconcile_errors_total"),
		sum("ctrlkit_controller_pods_created_total"), sum("ctrlkit_controller_pods_deleted_total"),
		sum(prommetrics.AddsName), sum(prommetrics.RetriesName), ratio)
}
