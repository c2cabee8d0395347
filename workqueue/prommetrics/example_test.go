package prommetrics_test

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ctrlkit/ctrlkit/workqueue"
	"github.com/ctrlkit/ctrlkit/workqueue/prommetrics"
)

// Two queues export their metrics on one registry, each under its name.
func ExampleNewProvider() {
	reg := prometheus.NewRegistry()
	p, err := prommetrics.NewProvider(reg)
	if err != nil {
		panic(err)
	}
	pods := workqueue.NewRateLimiting(workqueue.DefaultControllerRateLimiter[string](),
		workqueue.WithName("pods"), workqueue.WithMetricsProvider(p))
	nodes := workqueue.New[string](workqueue.WithName("nodes"), workqueue.WithMetricsProvider(p))
	defer pods.ShutDown()
	defer nodes.ShutDown()

	pods.Add("default/web-0")
	pods.Add("default/web-1")
	pods.AddAfter("default/web-2", time.Hour)
	nodes.Add("node-a")

	families, _ := reg.Gather()
	for _, f := range families {
		switch f.GetName() {
		case prommetrics.DepthName, prommetrics.AddsName, prommetrics.RetriesName:
			for _, m := range f.GetMetric() {
				v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
				fmt.Printf("%s{name=%q} %g\n", f.GetName(), m.GetLabel()[0].GetValue(), v)
			}
		}
	}
	// Output:
	// workqueue_adds_total{name="nodes"} 1
	// workqueue_adds_total{name="pods"} 2
	// workqueue_depth{name="nodes"} 1
	// workqueue_depth{name="pods"} 2
	// workqueue_retries_total{name="nodes"} 0
	// workqueue_retries_total{name="pods"} 1
}
