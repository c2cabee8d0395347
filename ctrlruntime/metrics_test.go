package ctrlruntime_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
	"github.com/ctrlkit/ctrlkit/workqueue"
)

// series returns the metrics of family name in g whose name and controller
// labels are both queue.
func series(t *testing.T, g prometheus.Gatherer, family, queue string) []*dto.Metric {
	t.Helper()
	families, err := g.Gather()
	require.NoError(t, err)
	var out []*dto.Metric
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["name"] == queue && labels["controller"] == queue {
				out = append(out, m)
			}
		}
	}
	return out
}

func counterValue(t *testing.T, g prometheus.Gatherer, family, queue string) float64 {
	t.Helper()
	s := series(t, g, family, queue)
	require.Len(t, s, 1, "one %s series for %s", family, queue)
	return s[0].GetCounter().GetValue()
}

// The queue's metrics appear in controller-runtime's metrics.Registry, which
// the manager serves on /metrics, under the standard names and labels, next
// to a controller-runtime priority queue's, with no registration error.
func TestQueueMetricsOnControllerRuntimeRegistry(t *testing.T) {
	q := ctrlruntime.NewTypedQueue[string]("metrics-ctrlkit", nil)
	defer q.ShutDown()
	theirs := priorityqueue.New[string]("metrics-controller-runtime")
	defer theirs.ShutDown()

	q.Add("a")
	q.Add("b")
	q.AddWithOpts(priorityqueue.AddOpts{After: time.Millisecond}, "c")
	theirs.Add("z")
	for range 3 {
		item, _ := q.Get()
		q.Done(item)
	}

	g := crmetrics.Registry
	assert.Equal(t, 3.0, counterValue(t, g, "workqueue_adds_total", "metrics-ctrlkit"))
	assert.Equal(t, 1.0, counterValue(t, g, "workqueue_retries_total", "metrics-ctrlkit"))
	depth := series(t, g, "workqueue_depth", "metrics-ctrlkit")
	require.Len(t, depth, 1)
	assert.Equal(t, 0.0, depth[0].GetGauge().GetValue())
	work := series(t, g, "workqueue_work_duration_seconds", "metrics-ctrlkit")
	require.Len(t, work, 1)
	assert.Equal(t, uint64(3), work[0].GetHistogram().GetSampleCount())
	latency := series(t, g, "workqueue_queue_duration_seconds", "metrics-ctrlkit")
	require.Len(t, latency, 1)
	assert.Equal(t, uint64(3), latency[0].GetHistogram().GetSampleCount())
	require.Eventually(t, func() bool {
		return len(series(t, g, "workqueue_adds_total", "metrics-controller-runtime")) == 1
	}, 5*time.Second, 10*time.Millisecond, "controller-runtime's own queue still reports")
}

// The provider over metrics.Registry uses the very collectors
// controller-runtime registered: registering them again must be refused as
// already registered, and a fresh registry gets them registered once.
func TestMetricsProviderSharesControllerRuntimeCollectors(t *testing.T) {
	p, err := ctrlruntime.DefaultMetricsProvider()
	require.NoError(t, err, "the help strings or labels no longer match controller-runtime's")
	again, err := ctrlruntime.NewMetricsProvider(crmetrics.Registry)
	require.NoError(t, err)
	p.NewAddsMetric("shared-check").Inc()
	again.NewAddsMetric("shared-check").Inc()
	assert.Equal(t, 2.0, counterValue(t, crmetrics.Registry, "workqueue_adds_total", "shared-check"))

	reg := prometheus.NewRegistry()
	fresh, err := ctrlruntime.NewMetricsProvider(reg)
	require.NoError(t, err)
	fresh.NewAddsMetric("fresh").Inc()
	_, err = ctrlruntime.NewMetricsProvider(reg)
	require.NoError(t, err)
	assert.Equal(t, 1.0, counterValue(t, reg, "workqueue_adds_total", "fresh"))
	assert.Empty(t, series(t, crmetrics.Registry, "workqueue_adds_total", "fresh"))
}

func TestMetricsProviderRejectsConflictingCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "workqueue_adds_total", Help: "something else"}, []string{"queue"}))
	_, err := ctrlruntime.NewMetricsProvider(reg)
	assert.Error(t, err)
}

// A queue whose options name another provider reports there instead.
func TestNewQueueFuncOptions(t *testing.T) {
	reg := prometheus.NewRegistry()
	p, err := ctrlruntime.NewMetricsProvider(reg)
	require.NoError(t, err)
	newQueue := ctrlruntime.NewQueueFunc[string](workqueueWithProvider(p))
	q := newQueue("own-registry", nil)
	defer q.ShutDown()
	q.Add("a")
	assert.Equal(t, 1.0, counterValue(t, reg, "workqueue_adds_total", "own-registry"))
	assert.Empty(t, series(t, crmetrics.Registry, "workqueue_adds_total", "own-registry"))
	_, isPriorityQueue := q.(priorityqueue.PriorityQueue[string])
	assert.True(t, isPriorityQueue)
}

func workqueueWithProvider(p *ctrlruntime.MetricsProvider) workqueue.Option {
	return workqueue.WithMetricsProvider(p)
}
