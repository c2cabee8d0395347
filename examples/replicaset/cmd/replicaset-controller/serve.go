package main

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/process"
	"github.com/ctrlkit/ctrlkit/shard"
	"github.com/ctrlkit/ctrlkit/workqueue/prommetrics"
)

// metrics is the binary's Prometheus registry, with the Go runtime's and
// process's families: heap and CPU are what a ring of replicas divides.
type metrics struct {
	registry *prometheus.Registry
	queue    *prommetrics.Provider
	*prommetrics.ControllerMetrics
}

func newMetrics() (*metrics, error) {
	m := &metrics{registry: prometheus.NewRegistry()}
	m.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var err error
	if m.queue, err = prommetrics.NewProvider(m.registry); err != nil {
		return nil, err
	}
	m.ControllerMetrics, err = prommetrics.NewControllerMetrics(m.registry)
	return m, err
}

// serve runs the controller, under a lease or as a ring member when asked,
// until drain is closed (graceful stop) or ctx is done (immediate stop), with
// the health and metrics servers alongside. simulated only relaxes the health
// server: the demo must not fail on a developer's taken port.
func serve(ctx context.Context, drain <-chan struct{}, o options, cs process.Clients, extra []replicaset.Option, simulated bool) error {
	m := o.metrics
	if m == nil {
		var err error
		if m, err = newMetrics(); err != nil {
			return err
		}
	}
	// The recorder the controller would start for itself, counting the pods
	// it writes.
	recorder, stopEvents := process.StartEvents(ctx, cs.Requests, o.kind.EventSource())
	defer stopEvents()
	opts := append([]replicaset.Option{
		podset.WithEventRecorder(m.RecordPodWrites(recorder, string(o.kind))),
		podset.WithMetrics(m), podset.WithMetricsProvider(m.queue),
		podset.WithWorkers(o.workers), podset.WithBurstReplicas(o.burst), podset.WithDrainTimeout(o.drainTimeout),
	}, extra...)

	// With --shard-ring a Runner builds a controller per share; otherwise
	// one controller manages everything.
	factory := informers.NewSharedInformerFactoryWithOptions(cs.Watches, 0, informers.WithNamespace(o.namespace))
	var ctrl *replicaset.Controller
	var ring *shard.Runner
	var err error
	if o.shard.Enabled() {
		ring, err = newRing(o, cs, opts, m)
	} else {
		ctrl, err = replicaset.New(ctx, o.kind, cs.Requests, factory, opts...)
	}
	if err != nil {
		return err
	}
	var watchdog *leaderelection.HealthzAdaptor
	if o.lease.Enabled {
		watchdog = leaderelection.NewLeaderHealthzAdaptor(o.lease.LeaseDuration)
	}
	var leading atomic.Bool
	ready := func() error {
		if ring != nil {
			return ring.Ready()
		}
		if (o.lease.Enabled && !leading.Load()) || ctrl.HasSynced() {
			return nil // a standby is ready to take over
		}
		return errors.New("informer caches not synced")
	}
	// Health and metrics never share a port: probes must reach the health
	// port from outside the pod, metrics need not (see --metrics-addr).
	if o.healthAddr != "" {
		h, err := process.Serve(ctx, o.healthAddr, process.HealthHandler(watchdog, ready))
		switch {
		case err == nil:
			defer h.Stop()
		case simulated:
			klog.FromContext(ctx).Info("Health server disabled", "reason", err.Error())
		default:
			return err
		}
	}
	if o.metricsAddr != "" {
		// Refused even when simulated: run checked the address at start.
		h, err := process.Serve(ctx, o.metricsAddr, process.MetricsHandler(promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry}), o.profiling))
		if err != nil {
			return err
		}
		defer h.Stop()
	}
	if ring != nil {
		return ring.Run(ctx, drain)
	}
	// work runs the controller until ctx is done (stop now) or drain is
	// closed (drain, then stop); the informers outlive the drain.
	work := func(ctx context.Context) {
		leading.Store(true)
		informerCtx, stopInformers := context.WithCancel(ctx)
		defer factory.Shutdown()
		defer stopInformers()
		factory.Start(informerCtx.Done())
		// Run returns only after one of the two, so this always ends.
		go func() {
			select {
			case <-drain:
				ctrl.Drain()
			case <-ctx.Done():
			}
		}()
		_ = ctrl.Run(ctx) // nil once stopped; misuse is impossible here
	}
	if !o.lease.Enabled {
		work(ctx)
		return nil
	}
	return process.RunWithLease(ctx, drain, cs.Leases, o.lease, watchdog, work)
}

// newRing joins the ring and returns the Runner of a controller per share,
// its metrics registered.
func newRing(o options, cs process.Clients, opts []replicaset.Option, m *metrics) (*shard.Runner, error) {
	member, err := o.shard.NewMember(cs.Leases.CoordinationV1())
	if err != nil {
		return nil, err
	}
	r := shard.NewRunner(member, func(ctx context.Context, e *shard.Epoch) (*shard.Work, error) {
		w, err := replicaset.NewForShare(ctx, o.kind, e, cs.Requests, cs.Watches, o.namespace, shard.ByKey(o.shard.Key()), o.shard.Children(), opts...)
		if err != nil {
			return nil, err
		}
		// A queue stopped at once keeps its items, and so its depth, while
		// the next share's publishes under the same name.
		run := w.Run
		w.Run = func(ctx context.Context) { run(ctx); m.queue.ResetGauges(o.kind.QueueName()) }
		w.SweepInterval = o.shard.SweepInterval
		return w, nil
	})
	return r, prommetrics.RegisterRunner(m.registry, r)
}
