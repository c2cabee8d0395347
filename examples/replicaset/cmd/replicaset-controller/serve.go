package main

import (
	"context"
	"errors"
	"sync/atomic"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/shard"
)

// serve runs the controller (under a lease when asked) until drain is closed
// (graceful stop) or ctx is done (immediate stop), with the health server
// alongside. simulated only relaxes the health server: the demo must not fail
// because the port is taken on a developer's machine.
func serve(ctx context.Context, drain <-chan struct{}, o options, cs clients, extra []replicaset.Option, simulated bool) error {
	factory := informers.NewSharedInformerFactoryWithOptions(cs.watches, 0, informers.WithNamespace(o.namespace))
	client := cs.requests
	metrics := o.metrics
	if metrics == nil {
		m, err := newControllerMetrics()
		if err != nil {
			return err
		}
		metrics = m
	}
	recorder, stopRecording := startEventRecorder(ctx, client, o.kind, metrics)
	defer stopRecording()
	opts := append([]replicaset.Option{
		podset.WithEventRecorder(recorder),
		podset.WithMetrics(metrics),
		podset.WithMetricsProvider(metrics.queue),
		podset.WithWorkers(o.workers),
		podset.WithBurstReplicas(o.burst),
		podset.WithDrainTimeout(o.drainTimeout),
	}, extra...)
	// With --shard-ring the ring runner builds a controller per share
	// (sharded.go); otherwise one controller manages everything.
	var ctrl *replicaset.Controller
	var ring *shard.Runner
	var err error
	if o.shard.enabled() {
		ring, err = newRing(o, cs, opts, metrics)
	} else {
		ctrl, err = newController(ctx, o.kind, client, factory, opts)
	}
	if err != nil {
		return err
	}
	var watchdog *leaderelection.HealthzAdaptor
	if o.lease.enabled {
		watchdog = leaderelection.NewLeaderHealthzAdaptor(o.lease.leaseDuration)
	}
	var leading atomic.Bool
	ready := func() error {
		if o.lease.enabled && !leading.Load() {
			return nil // a standby is ready to take over
		}
		if ring != nil {
			return ring.Ready()
		}
		if !ctrl.HasSynced() {
			return errors.New("informer caches not synced")
		}
		return nil
	}
	// Health and metrics never share a port: probes must reach the health
	// port from outside the pod, metrics need not (see --metrics-addr).
	if o.healthAddr != "" {
		h, err := startHealthServer(o.healthAddr, watchdog, ready)
		switch {
		case err == nil:
			defer h.stop()
		case simulated:
			klog.FromContext(ctx).Info("Health server disabled", "reason", err.Error())
		default:
			return err
		}
	}
	if o.metricsAddr != "" {
		// Refused even when simulated: run checked the address at start,
		// and a binary asked for metrics must not run on without them.
		h, err := startMetricsServer(o.metricsAddr, metrics.handler(), o.profiling)
		if err != nil {
			return err
		}
		defer h.stop()
	}
	// work runs the controller until ctx is done (stop now) or drain is
	// closed (drain, then stop).
	work := func(ctx context.Context) {
		leading.Store(true)
		// The informers outlive a graceful stop's drain, not the run.
		informerCtx, stopInformers := context.WithCancel(ctx)
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
		_ = ctrl.Run(ctx) // returns nil once stopped; misuse is impossible here
		stopInformers()
		factory.Shutdown()
	}
	if ring != nil {
		return ring.Run(ctx, drain)
	}
	if !o.lease.enabled {
		work(ctx)
		return nil
	}
	return runWithLease(ctx, drain, cs.leases, o.lease, watchdog, work)
}

func newController(ctx context.Context, kind string, client kubernetes.Interface, f informers.SharedInformerFactory, opts []replicaset.Option) (*replicaset.Controller, error) {
	if kind == kindReplicationController {
		return replicaset.NewReplicationManager(ctx, client, f.Core().V1().Pods(), f.Core().V1().ReplicationControllers(), opts...)
	}
	return replicaset.NewReplicaSetController(ctx, client, f.Core().V1().Pods(), f.Apps().V1().ReplicaSets(), opts...)
}
