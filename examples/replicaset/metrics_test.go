package replicaset

import (
	"sync"
	"testing"

	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/stretchr/testify/assert"
	cgworkqueue "k8s.io/client-go/util/workqueue"
)

type noopMetric struct{}

func (noopMetric) Inc()            {}
func (noopMetric) Dec()            {}
func (noopMetric) Set(float64)     {}
func (noopMetric) Observe(float64) {}

// namesProvider is a client-go MetricsProvider that remembers the queue
// names it was asked for.
type namesProvider struct {
	mu    sync.Mutex
	names map[string]bool
}

func (p *namesProvider) seen(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.names == nil {
		p.names = map[string]bool{}
	}
	p.names[name] = true
}

func (p *namesProvider) NewDepthMetric(n string) cgworkqueue.GaugeMetric {
	p.seen(n)
	return noopMetric{}
}
func (p *namesProvider) NewAddsMetric(n string) cgworkqueue.CounterMetric {
	p.seen(n)
	return noopMetric{}
}
func (p *namesProvider) NewLatencyMetric(n string) cgworkqueue.HistogramMetric {
	p.seen(n)
	return noopMetric{}
}
func (p *namesProvider) NewWorkDurationMetric(n string) cgworkqueue.HistogramMetric {
	p.seen(n)
	return noopMetric{}
}
func (p *namesProvider) NewUnfinishedWorkSecondsMetric(n string) cgworkqueue.SettableGaugeMetric {
	p.seen(n)
	return noopMetric{}
}
func (p *namesProvider) NewLongestRunningProcessorSecondsMetric(n string) cgworkqueue.SettableGaugeMetric {
	p.seen(n)
	return noopMetric{}
}
func (p *namesProvider) NewRetriesMetric(n string) cgworkqueue.CounterMetric {
	p.seen(n)
	return noopMetric{}
}

// TestMetricsProviderGetsTheQueueName: each kind's queue reports under
// upstream's queue name, through the caller's provider only.
func TestMetricsProviderGetsTheQueueName(t *testing.T) {
	cases := map[string]string{rsKind.name: "replicaset", rcKind.name: "replicationmanager"}
	forBothKinds(t, func(t *testing.T, k testKind) {
		p := &namesProvider{}
		e := newEnv(t, k, nil, podset.WithMetricsProvider(p))
		e.c.Queue().Add("default/x")
		p.mu.Lock()
		defer p.mu.Unlock()
		assert.Equal(t, map[string]bool{cases[k.name]: true}, p.names)
	})
}
