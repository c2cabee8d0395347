package prommetrics_test

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/podcontrol"
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

// A controller's own metrics on the registry its queue's are served from:
// podset.WithMetrics takes the ControllerMetrics, and its event recorder,
// wrapped by RecordPodWrites, counts the pods it writes.
func ExampleNewControllerMetrics() {
	reg := prometheus.NewRegistry()
	m, err := prommetrics.NewControllerMetrics(reg)
	if err != nil {
		panic(err)
	}
	m.ObserveSync("ReplicaSet", 20*time.Millisecond, nil)
	m.ObserveSync("ReplicaSet", 5*time.Millisecond, errors.New("pods is forbidden"))
	recorder := m.RecordPodWrites(record.NewFakeRecorder(1), "replicaset")
	recorder.Event(&corev1.Pod{}, corev1.EventTypeNormal, podcontrol.SuccessfulCreatePodReason, "Created pod: web-0")

	families, _ := reg.Gather()
	for _, f := range families {
		switch f.GetName() {
		case prommetrics.ReconcileTotalName, prommetrics.PodsCreatedName:
			for _, s := range f.GetMetric() {
				labels := ""
				for _, l := range s.GetLabel() {
					labels += fmt.Sprintf("%s=%q ", l.GetName(), l.GetValue())
				}
				fmt.Printf("%s{%s} %g\n", f.GetName(), strings.TrimSpace(labels), s.GetCounter().GetValue())
			}
		}
	}
	// Output:
	// controller_runtime_reconcile_total{controller="replicaset" result="error"} 1
	// controller_runtime_reconcile_total{controller="replicaset" result="success"} 1
	// ctrlkit_controller_pods_created_total{controller="replicaset"} 1
}
