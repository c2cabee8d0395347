package workqueue

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testMetric records what the queue reports.
type testMetric struct {
	mu    sync.Mutex
	val   float64
	obs   []float64
	notes chan struct{}
}

func (m *testMetric) Inc() { m.add(1) }
func (m *testMetric) Dec() { m.add(-1) }
func (m *testMetric) add(d float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.val += d
}
func (m *testMetric) Set(v float64) {
	m.mu.Lock()
	m.val = v
	ch := m.notes
	m.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
func (m *testMetric) Observe(v float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.obs = append(m.obs, v)
}
func (m *testMetric) value() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.val
}
func (m *testMetric) observations() []float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]float64(nil), m.obs...)
}

type testProvider struct {
	names                                                                 []string
	depth, adds, latency, duration, unfinished, longest, retries, waiting testMetric
}

func (p *testProvider) NewDepthMetric(n string) GaugeMetric {
	p.names = append(p.names, n)
	return &p.depth
}
func (p *testProvider) NewAddsMetric(string) CounterMetric           { return &p.adds }
func (p *testProvider) NewLatencyMetric(string) HistogramMetric      { return &p.latency }
func (p *testProvider) NewWorkDurationMetric(string) HistogramMetric { return &p.duration }
func (p *testProvider) NewUnfinishedWorkSecondsMetric(string) SettableGaugeMetric {
	return &p.unfinished
}
func (p *testProvider) NewLongestRunningProcessorSecondsMetric(string) SettableGaugeMetric {
	return &p.longest
}
func (p *testProvider) NewRetriesMetric(string) CounterMetric    { return &p.retries }
func (p *testProvider) NewWaitingDepthMetric(string) GaugeMetric { return &p.waiting }

// nilProvider returns nil metrics, which the queue must tolerate.
type nilProvider struct{}

func (nilProvider) NewDepthMetric(string) GaugeMetric                                  { return nil }
func (nilProvider) NewAddsMetric(string) CounterMetric                                 { return nil }
func (nilProvider) NewLatencyMetric(string) HistogramMetric                            { return nil }
func (nilProvider) NewWorkDurationMetric(string) HistogramMetric                       { return nil }
func (nilProvider) NewUnfinishedWorkSecondsMetric(string) SettableGaugeMetric          { return nil }
func (nilProvider) NewLongestRunningProcessorSecondsMetric(string) SettableGaugeMetric { return nil }
func (nilProvider) NewRetriesMetric(string) CounterMetric                              { return nil }

func near(t *testing.T, want, got float64) {
	t.Helper()
	assert.InDelta(t, want, got, 1e-9)
}

func TestMetrics(t *testing.T) {
	p := &testProvider{}
	q, c := newFakeQueue[string](t, WithName("test"), WithMetricsProvider(p))
	assert.Equal(t, []string{"test"}, p.names)

	q.Add("foo")
	near(t, 1, p.adds.value())
	near(t, 1, p.depth.value())

	c.Step(50 * time.Microsecond)
	item, _ := q.Get()
	require.Equal(t, "foo", item)
	assert.Equal(t, []float64{50e-6}, p.latency.observations())
	near(t, 0, p.depth.value())

	// Adds while processing collapse into one dirty item.
	for range 5 {
		q.Add(item)
	}
	near(t, 2, p.adds.value())
	near(t, 1, p.depth.value())

	c.Step(25 * time.Microsecond)
	q.Done(item)
	assert.Equal(t, []float64{25e-6}, p.duration.observations())
	near(t, 1, p.depth.value())

	item, _ = q.Get()
	require.Equal(t, "foo", item)
	// Queue latency runs from the re-add, 25µs before it was handed out.
	assert.Equal(t, []float64{50e-6, 25e-6}, p.latency.observations())

	ch, longestCh := make(chan struct{}, 1), make(chan struct{}, 1)
	p.unfinished.mu.Lock()
	p.unfinished.notes = ch
	p.unfinished.mu.Unlock()
	p.longest.mu.Lock()
	p.longest.notes = longestCh
	p.longest.mu.Unlock()
	c.Step(unfinishedRefresh)
	<-ch
	<-longestCh
	near(t, unfinishedRefresh.Seconds(), p.unfinished.value())
	near(t, unfinishedRefresh.Seconds(), p.longest.value())

	q.Done(item)
	obs := p.duration.observations()
	near(t, unfinishedRefresh.Seconds(), obs[len(obs)-1])

	// Every AddAfter is a retry, including non-positive delays.
	q.AddAfter("bar", 0)
	q.AddAfter("baz", time.Second)
	near(t, 2, p.retries.value())
	near(t, 1, p.waiting.value())
}

// TestMetricShutdown: the gauges stop refreshing once ShutDown returns.
func TestMetricShutdown(t *testing.T) {
	p := &testProvider{}
	ch := make(chan struct{}, 1)
	p.unfinished.notes = ch
	q, c := newFakeQueue[string](t, WithName("test"), WithMetricsProvider(p))
	require.Eventually(t, c.HasWaiters, time.Second, time.Millisecond)
	c.Step(unfinishedRefresh)
	<-ch
	q.ShutDown()
	c.Step(time.Hour)
	select {
	case <-ch:
		t.Fatal("metrics updated after shutdown")
	case <-time.After(10 * time.Millisecond):
	}
}

func TestMetricsNeedNameAndProvider(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want bool
	}{
		{"unnamed", []Option{WithMetricsProvider(&testProvider{})}, false},
		{"no provider", []Option{WithName("x")}, false},
		{"both", []Option{WithName("x"), WithMetricsProvider(&testProvider{})}, true},
		{"provider returning nils", []Option{WithName("x"), WithMetricsProvider(nilProvider{})}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := New[int](tc.opts...)
			defer q.ShutDown()
			assert.Equal(t, tc.want, q.m != nil)
			q.Add(1)
			i, _ := q.Get()
			q.AddAfter(2, time.Hour)
			q.Done(i)
		})
	}
}

func TestSeconds(t *testing.T) {
	assert.InDelta(t, 1.5, seconds(int64(1500*time.Millisecond)), 1e-12)
	assert.False(t, math.IsNaN(seconds(0)))
}
