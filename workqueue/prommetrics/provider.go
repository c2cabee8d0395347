package prommetrics

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	cgworkqueue "k8s.io/client-go/util/workqueue"
)

// The metric names, as client-go's component-base and controller-runtime
// register them, so existing dashboards and alerts keep working.
const (
	DepthName          = "workqueue_depth"
	AddsName           = "workqueue_adds_total"
	QueueDurationName  = "workqueue_queue_duration_seconds"
	WorkDurationName   = "workqueue_work_duration_seconds"
	UnfinishedWorkName = "workqueue_unfinished_work_seconds"
	LongestRunningName = "workqueue_longest_running_processor_seconds"
	RetriesName        = "workqueue_retries_total"
)

// NameLabel is the label that carries the queue's name.
const NameLabel = "name"

// durationBuckets are component-base's: 10 ns to 10 s, by powers of ten.
var durationBuckets = prometheus.ExponentialBuckets(10e-9, 10, 10)

// Provider is a client-go workqueue.MetricsProvider that records on the
// Prometheus registry it was built for. Give it to each queue through
// workqueue.WithMetricsProvider together with a distinct workqueue.WithName:
// every queue gets its own series, labelled by its name, and nothing is
// registered globally.
type Provider struct {
	depth          *prometheus.GaugeVec
	adds           *prometheus.CounterVec
	queueDuration  *prometheus.HistogramVec
	workDuration   *prometheus.HistogramVec
	unfinishedWork *prometheus.GaugeVec
	longestRunning *prometheus.GaugeVec
	retries        *prometheus.CounterVec
}

var _ cgworkqueue.MetricsProvider = (*Provider)(nil)

// NewProvider registers the seven workqueue metrics on reg and returns a
// provider that records on them. Building a second provider on the same
// registry reuses the metrics already registered there, so any number of
// providers and queues share one registry without a collision. It fails
// when reg holds a different metric under one of the names. A nil reg is a
// programmer error and panics (prometheus.DefaultRegisterer is the global
// registry).
func NewProvider(reg prometheus.Registerer) (*Provider, error) {
	if reg == nil {
		panic("prommetrics: NewProvider: nil registerer; pass prometheus.DefaultRegisterer for the global registry")
	}
	label := []string{NameLabel}
	p := &Provider{}
	var err error
	if p.depth, err = register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: DepthName,
		Help: "Number of items waiting in the work queue to be handed to a worker.",
	}, label)); err != nil {
		return nil, err
	}
	if p.adds, err = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: AddsName,
		Help: "Number of items added to the work queue that were not already waiting in it.",
	}, label)); err != nil {
		return nil, err
	}
	if p.queueDuration, err = register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    QueueDurationName,
		Help:    "Seconds an item waits in the work queue between being added and being handed to a worker.",
		Buckets: durationBuckets,
	}, label)); err != nil {
		return nil, err
	}
	if p.workDuration, err = register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    WorkDurationName,
		Help:    "Seconds a worker spends on an item, from handing it out to Done.",
		Buckets: durationBuckets,
	}, label)); err != nil {
		return nil, err
	}
	if p.unfinishedWork, err = register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: UnfinishedWorkName,
		Help: "Sum of the seconds spent so far on the items workers hold now. A steady rise means stuck workers; its slope is their number.",
	}, label)); err != nil {
		return nil, err
	}
	if p.longestRunning, err = register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: LongestRunningName,
		Help: "Seconds spent so far on the item held longest by a worker.",
	}, label)); err != nil {
		return nil, err
	}
	if p.retries, err = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: RetriesName,
		Help: "Number of delayed adds (retries) the work queue received.",
	}, label)); err != nil {
		return nil, err
	}
	return p, nil
}

// register registers c on reg, or returns the equal collector reg already
// holds, which is how providers on one registry come to share their vectors.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	var zero C
	return zero, fmt.Errorf("prommetrics: registering the workqueue metrics: %w", err)
}

// NewDepthMetric implements workqueue.MetricsProvider.
func (p *Provider) NewDepthMetric(name string) cgworkqueue.GaugeMetric {
	return p.depth.WithLabelValues(name)
}

// NewAddsMetric implements workqueue.MetricsProvider.
func (p *Provider) NewAddsMetric(name string) cgworkqueue.CounterMetric {
	return p.adds.WithLabelValues(name)
}

// NewLatencyMetric implements workqueue.MetricsProvider.
func (p *Provider) NewLatencyMetric(name string) cgworkqueue.HistogramMetric {
	return p.queueDuration.WithLabelValues(name)
}

// NewWorkDurationMetric implements workqueue.MetricsProvider.
func (p *Provider) NewWorkDurationMetric(name string) cgworkqueue.HistogramMetric {
	return p.workDuration.WithLabelValues(name)
}

// NewUnfinishedWorkSecondsMetric implements workqueue.MetricsProvider.
func (p *Provider) NewUnfinishedWorkSecondsMetric(name string) cgworkqueue.SettableGaugeMetric {
	return p.unfinishedWork.WithLabelValues(name)
}

// NewLongestRunningProcessorSecondsMetric implements workqueue.MetricsProvider.
func (p *Provider) NewLongestRunningProcessorSecondsMetric(name string) cgworkqueue.SettableGaugeMetric {
	return p.longestRunning.WithLabelValues(name)
}

// NewRetriesMetric implements workqueue.MetricsProvider.
func (p *Provider) NewRetriesMetric(name string) cgworkqueue.CounterMetric {
	return p.retries.WithLabelValues(name)
}

// ResetGauges zeroes the depth and in-flight gauges of the queue name, for
// a controller that stopped at once and starts again on a new queue of the
// same name (a ring member's next share): the stopped queue keeps its items,
// and would leave its depth published until the new one changed it.
func (p *Provider) ResetGauges(name string) {
	p.depth.WithLabelValues(name).Set(0)
	p.unfinishedWork.WithLabelValues(name).Set(0)
	p.longestRunning.WithLabelValues(name).Set(0)
}
