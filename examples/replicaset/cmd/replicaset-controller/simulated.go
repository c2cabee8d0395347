package main

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/examples/replicaset/cmd/replicaset-controller/internal/demo"
	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// This file is the simulated mode only: with no cluster configured, the
// binary starts an in-memory cluster, runs the production wiring (serve) on
// it, and plays the scripted demo of package demo against it.

// demoResult is what the demo proves, for its test, with the scale-down
// decisions the controller reported.
type demoResult struct {
	demo.Result
	decisions []podset.ScaleDownDecision
}

// demoKind is the demo's owner kind for --kind.
func demoKind(kind string) demo.Kind {
	if kind == kindReplicationController {
		return demo.ReplicationController
	}
	return demo.ReplicaSet
}

// runSimulated starts the in-memory cluster and the controller on it, then
// plays the demo (or idles with --demo=false) until the demo ends, drain is
// closed (graceful stop) or ctx is done (immediate stop).
func runSimulated(ctx context.Context, drain <-chan struct{}, o options, out io.Writer) error {
	_, err := simulate(ctx, drain, o, out)
	return err
}

func simulate(ctx context.Context, drain <-chan struct{}, o options, out io.Writer) (demoResult, error) {
	p := demo.NewPrinter(out)
	cluster := simcluster.New(simcluster.WithNodes(o.simNodes), simcluster.WithStartupDelay(o.simDelay))
	p.Printf("no --kubeconfig and not in a cluster: running on an in-memory SIMULATED cluster (%d fake nodes, pods start after %v)",
		o.simNodes, o.simDelay)
	p.Printf("nothing here touches a real cluster; pods are simulated, no container runs")

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { _ = cluster.Run(ctx) })

	var (
		mu        sync.Mutex
		decisions []podset.ScaleDownDecision
	)
	report := podset.WithScaleDownReporter(func(d podset.ScaleDownDecision) {
		mu.Lock()
		decisions = append(decisions, d)
		mu.Unlock()
		p.Decision(d)
	})

	// The controller stops gracefully when the demo ends or on drain; the
	// demo stops on drain too.
	stop := make(chan struct{})
	var stopOnce sync.Once
	stopGracefully := func() { stopOnce.Do(func() { close(stop) }) }
	demoCtx, stopDemo := context.WithCancel(ctx)
	defer stopDemo()
	wg.Go(func() {
		select {
		case <-drain:
			stopDemo()
			stopGracefully()
		case <-demoCtx.Done():
		}
	})

	var (
		res     demoResult
		demoErr error
	)
	if o.demo {
		wg.Go(func() {
			// The demo ends the run either way: done, failed or timed out.
			defer stopGracefully()
			dctx, dcancel := context.WithTimeout(demoCtx, o.demoTimeout)
			defer dcancel()
			res.Result, demoErr = demo.Play(dctx, p, cluster, demoKind(o.kind))
			if demoErr != nil && demoCtx.Err() != nil && !errors.Is(dctx.Err(), context.DeadlineExceeded) {
				demoErr = nil // interrupted by a signal: not a failure
				p.Printf("interrupted; draining and exiting")
			}
		})
	} else {
		p.Printf("--demo=false: the controller runs idle on the simulated cluster; interrupt to exit")
	}
	metrics, err := newControllerMetrics()
	if err != nil {
		return res, err
	}
	o.metrics = metrics
	err = serve(ctx, stop, o, sameClient(cluster.Client()), []replicaset.Option{report}, true)
	stopDemo()
	cancel()
	wg.Wait()
	if o.demo && demoErr == nil && err == nil {
		p.Printf("metrics: %s", metrics.summary())
	}
	mu.Lock()
	res.decisions = decisions
	mu.Unlock()
	if err != nil {
		return res, err
	}
	return res, demoErr
}
