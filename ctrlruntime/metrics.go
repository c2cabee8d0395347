package ctrlruntime

import (
	"errors"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	cgworkqueue "k8s.io/client-go/util/workqueue"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/ctrlkit/ctrlkit/workqueue"
)

// The label names and help strings below are those of controller-runtime's
// workqueue collectors, v0.22 to v0.25. They must match exactly: Prometheus
// hands back an already registered collector only for an identical
// descriptor, and that is how this provider shares controller-runtime's
// collectors instead of colliding with them.
// TestMetricsProviderSharesControllerRuntimeCollectors fails if a
// controller-runtime release changes them.
var (
	queueLabels = []string{"name", "controller"}
	depthLabels = []string{"name", "controller", "priority"}
)

const (
	depthHelp      = "Current depth of workqueue by workqueue and priority"
	addsHelp       = "Total number of adds handled by workqueue"
	latencyHelp    = "How long in seconds an item stays in workqueue before being requested"
	workHelp       = "How long in seconds processing an item from workqueue takes."
	unfinishedHelp = "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
		"Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases."
	longestHelp = "How many seconds has the longest running processor for workqueue been running."
	// controller-runtime reworded the retries help in v0.24; the first is
	// tried first, so a registry of ctrlkit's alone gets the newer one.
	retriesHelp = "Total number of items added to the workqueue with a non-zero delay " +
		"(rate-limited requeues, explicit RequeueAfter or AddAfter calls)"
	retriesHelpBeforeV024 = "Total number of retries handled by workqueue"
)

// MetricsProvider feeds a ctrlkit queue's metrics into controller-runtime's
// standard workqueue collectors (workqueue_depth, workqueue_adds_total, ...),
// labelled name=<controller> and controller=<controller>, as
// controller-runtime's own queues are. It implements client-go's
// workqueue.MetricsProvider, which ctrlkit's queue accepts.
type MetricsProvider struct {
	depth      *prometheus.GaugeVec
	adds       *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	work       *prometheus.HistogramVec
	unfinished *prometheus.GaugeVec
	longest    *prometheus.GaugeVec
	retries    *prometheus.CounterVec
}

var _ cgworkqueue.MetricsProvider = (*MetricsProvider)(nil)

// NewMetricsProvider returns a provider whose collectors live in reg. Where
// reg already holds a workqueue collector of the same shape (controller-runtime
// registers its own into metrics.Registry when its controller package is
// loaded), that collector is reused, so the series of ctrlkit queues and of
// controller-runtime's queues share one metric family and nothing is
// registered twice. Otherwise the collectors are registered in reg. A
// collector of the same name but another shape is an error.
func NewMetricsProvider(reg prometheus.Registerer) (*MetricsProvider, error) {
	sub := crmetrics.WorkQueueSubsystem
	buckets := prometheus.ExponentialBuckets(10e-9, 10, 12)
	p := &MetricsProvider{}
	var err error
	if p.depth, err = shared(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: sub, Name: crmetrics.DepthKey, Help: depthHelp}, depthLabels)); err != nil {
		return nil, err
	}
	if p.adds, err = shared(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: sub, Name: crmetrics.AddsKey, Help: addsHelp}, queueLabels)); err != nil {
		return nil, err
	}
	if p.latency, err = shared(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: sub, Name: crmetrics.QueueLatencyKey, Help: latencyHelp, Buckets: buckets}, queueLabels)); err != nil {
		return nil, err
	}
	if p.work, err = shared(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: sub, Name: crmetrics.WorkDurationKey, Help: workHelp, Buckets: buckets}, queueLabels)); err != nil {
		return nil, err
	}
	if p.unfinished, err = shared(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: sub, Name: crmetrics.UnfinishedWorkKey, Help: unfinishedHelp}, queueLabels)); err != nil {
		return nil, err
	}
	if p.longest, err = shared(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: sub, Name: crmetrics.LongestRunningProcessorKey, Help: longestHelp}, queueLabels)); err != nil {
		return nil, err
	}
	for _, help := range []string{retriesHelp, retriesHelpBeforeV024} {
		if p.retries, err = shared(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: sub, Name: crmetrics.RetriesKey, Help: help}, queueLabels)); err == nil {
			return p, nil
		}
	}
	return nil, err
}

// shared registers c in reg, or returns the identical collector reg already
// holds.
func shared[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing, nil
		}
		return c, fmt.Errorf("ctrlruntime: workqueue collector already registered as %T", already.ExistingCollector)
	}
	return c, fmt.Errorf("ctrlruntime: registering workqueue collector: %w", err)
}

// NewDepthMetric returns the depth gauge of queue name. A ctrlkit queue
// reports one depth across priorities, so the priority label is empty, as
// for controller-runtime's non-priority queues.
func (p *MetricsProvider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return p.depth.WithLabelValues(name, name, "")
}

// NewAddsMetric returns the adds counter of queue name.
func (p *MetricsProvider) NewAddsMetric(name string) workqueue.CounterMetric {
	return p.adds.WithLabelValues(name, name)
}

// NewLatencyMetric returns the queue-latency histogram of queue name.
func (p *MetricsProvider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return p.latency.WithLabelValues(name, name)
}

// NewWorkDurationMetric returns the work-duration histogram of queue name.
func (p *MetricsProvider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return p.work.WithLabelValues(name, name)
}

// NewUnfinishedWorkSecondsMetric returns the unfinished-work gauge of queue name.
func (p *MetricsProvider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.unfinished.WithLabelValues(name, name)
}

// NewLongestRunningProcessorSecondsMetric returns the longest-processor gauge of queue name.
func (p *MetricsProvider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.longest.WithLabelValues(name, name)
}

// NewRetriesMetric returns the retries counter of queue name.
func (p *MetricsProvider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return p.retries.WithLabelValues(name, name)
}

var (
	defaultProviderOnce sync.Once
	defaultProvider     *MetricsProvider
	defaultProviderErr  error
)

// DefaultMetricsProvider returns the provider over controller-runtime's
// metrics.Registry, the registry its manager serves on /metrics. It is built
// once; the error says why metrics cannot be shared with controller-runtime.
func DefaultMetricsProvider() (*MetricsProvider, error) {
	defaultProviderOnce.Do(func() {
		defaultProvider, defaultProviderErr = NewMetricsProvider(crmetrics.Registry)
	})
	return defaultProvider, defaultProviderErr
}
