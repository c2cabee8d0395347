package workqueue

import (
	"time"

	cgworkqueue "k8s.io/client-go/util/workqueue"
)

// The metric interfaces are client-go's own, so a provider written for
// client-go (for example component-base's or controller-runtime's Prometheus
// adapter) works here unchanged.
type (
	// MetricsProvider creates the seven per-queue metrics; it is client-go's interface.
	MetricsProvider = cgworkqueue.MetricsProvider
	// GaugeMetric is a value that goes up and down.
	GaugeMetric = cgworkqueue.GaugeMetric
	// SettableGaugeMetric is a gauge that is set to a value.
	SettableGaugeMetric = cgworkqueue.SettableGaugeMetric
	// CounterMetric only goes up.
	CounterMetric = cgworkqueue.CounterMetric
	// HistogramMetric records observations.
	HistogramMetric = cgworkqueue.HistogramMetric
)

// WaitingMetricsProvider is an optional extension of MetricsProvider. Delayed
// items are invisible to client-go's depth gauge (crossplane-runtime#674); a
// provider that implements this interface gets a gauge of the items waiting
// for their AddAfter deadline, so none sit in limbo.
type WaitingMetricsProvider interface {
	NewWaitingDepthMetric(name string) GaugeMetric
}

// unfinishedRefresh is how often the in-flight gauges are recomputed; it is
// client-go's period, so dashboards keep their resolution.
const unfinishedRefresh = 500 * time.Millisecond

// queueMetrics holds one queue's metrics. A nil *queueMetrics means metrics
// are off, which keeps the unnamed hot path free of clock reads.
type queueMetrics struct {
	depth        GaugeMetric
	adds         CounterMetric
	latency      HistogramMetric
	workDuration HistogramMetric
	unfinished   SettableGaugeMetric
	longest      SettableGaugeMetric
	retries      CounterMetric
	waiting      GaugeMetric // nil unless the provider implements WaitingMetricsProvider
}

func newQueueMetrics(name string, p MetricsProvider) *queueMetrics {
	// Like client-go, metrics need both a name (their label) and a provider.
	if name == "" || p == nil {
		return nil
	}
	m := &queueMetrics{
		depth:        p.NewDepthMetric(name),
		adds:         p.NewAddsMetric(name),
		latency:      p.NewLatencyMetric(name),
		workDuration: p.NewWorkDurationMetric(name),
		unfinished:   p.NewUnfinishedWorkSecondsMetric(name),
		longest:      p.NewLongestRunningProcessorSecondsMetric(name),
		retries:      p.NewRetriesMetric(name),
	}
	if wp, ok := p.(WaitingMetricsProvider); ok {
		m.waiting = wp.NewWaitingDepthMetric(name)
	}
	// A provider may hand back nil metrics; replace them so the hot path needs
	// no nil checks.
	if m.depth == nil {
		m.depth = noop{}
	}
	if m.adds == nil {
		m.adds = noop{}
	}
	if m.latency == nil {
		m.latency = noop{}
	}
	if m.workDuration == nil {
		m.workDuration = noop{}
	}
	if m.unfinished == nil {
		m.unfinished = noop{}
	}
	if m.longest == nil {
		m.longest = noop{}
	}
	if m.retries == nil {
		m.retries = noop{}
	}
	return m
}

type noop struct{}

func (noop) Inc()            {}
func (noop) Dec()            {}
func (noop) Set(float64)     {}
func (noop) Observe(float64) {}

// proc is an in-flight item and when it was handed out; the start time
// lives here rather than in every node, since only metrics need it.
type proc struct {
	idx   int32
	start int64
}

func seconds(ns int64) float64 { return float64(ns) / float64(time.Second) }

// updateUnfinished recomputes the two in-flight gauges. It walks only the
// items being processed, which are bounded by the number of workers.
func (q *Queue[T]) updateUnfinished() {
	q.lock()
	defer q.mu.Unlock()
	if q.m == nil {
		return
	}
	now := q.now()
	var total, longest int64
	for _, p := range q.procs {
		age := now - p.start
		total += age
		if age > longest {
			longest = age
		}
	}
	q.m.unfinished.Set(seconds(total))
	q.m.longest.Set(seconds(longest))
}
