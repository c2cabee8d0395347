package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/examples/replicaset/cmd/replicaset-controller/internal/demo"
	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/process"
	"github.com/ctrlkit/ctrlkit/simcluster"
	"github.com/ctrlkit/ctrlkit/workqueue/prommetrics"
)

// This file is the simulated mode only: with no cluster configured, the
// binary starts an in-memory cluster, runs the production wiring (serve) on
// it, and plays the scripted demo of package demo against it.

// simOptions are the flags of the simulated mode only.
type simOptions struct {
	demo           bool
	delay, timeout time.Duration
	nodes          int
}

func (s *simOptions) addFlags(fs *flag.FlagSet) {
	fs.BoolVar(&s.demo, "demo", true, "simulated mode only: play the scripted demo and exit; false keeps the simulated cluster running idle")
	fs.DurationVar(&s.delay, "sim-startup-delay", simcluster.DefaultStartupDelay, "simulated mode only: time a new pod takes to become Running and Ready")
	fs.IntVar(&s.nodes, "sim-nodes", simcluster.DefaultNodes, "simulated mode only: number of fake nodes")
	fs.DurationVar(&s.timeout, "demo-timeout", 50*time.Second, "simulated mode only: give up on the demo after this long")
}

// demoResult is what the demo proves, for its test, with the scale-down
// decisions the controller reported.
type demoResult struct {
	demo.Result
	decisions []podset.ScaleDownDecision
}

// demoKind is the demo's owner kind for --kind.
func demoKind(kind replicaset.Kind) demo.Kind {
	if kind == replicaset.ReplicationControllers {
		return demo.ReplicationController
	}
	return demo.ReplicaSet
}

// simulate starts the in-memory cluster and the controller on it, then
// plays the demo (or idles with --demo=false) until the demo ends, drain is
// closed (graceful stop) or ctx is done (immediate stop).
func simulate(ctx context.Context, drain <-chan struct{}, o options, out io.Writer) (demoResult, error) {
	p := demo.NewPrinter(out)
	cluster := simcluster.New(simcluster.WithNodes(o.sim.nodes), simcluster.WithStartupDelay(o.sim.delay))
	p.Printf("no --kubeconfig and not in a cluster: running on an in-memory SIMULATED cluster (%d fake nodes, pods start after %v)",
		o.sim.nodes, o.sim.delay)
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
	if o.sim.demo {
		wg.Go(func() {
			// The demo ends the run either way: done, failed or timed out.
			defer stopGracefully()
			dctx, dcancel := context.WithTimeout(demoCtx, o.sim.timeout)
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
	metrics, err := newMetrics()
	if err != nil {
		return res, err
	}
	o.metrics = metrics
	err = serve(ctx, stop, o, process.OneClient(cluster.Client()), []replicaset.Option{report}, true)
	stopDemo()
	cancel()
	wg.Wait()
	if o.sim.demo && demoErr == nil && err == nil {
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

// summary reads the registry back into one line for the demo's end: what an
// operator would see on /metrics, without a Prometheus server.
func (m *metrics) summary() string {
	families, err := m.registry.Gather()
	if err != nil {
		return "unreadable: " + err.Error()
	}
	// sum adds up every series of the family name whose labels include
	// want (all series when want is empty).
	sum := func(name string, want ...string) float64 {
		var total float64
		for _, f := range families {
			if f.GetName() != name {
				continue
			}
			for _, s := range f.GetMetric() {
				if len(want) == 2 && !hasLabel(s.GetLabel(), want[0], want[1]) {
					continue
				}
				switch {
				case s.Counter != nil:
					total += s.GetCounter().GetValue()
				case s.Histogram != nil:
					total += float64(s.GetHistogram().GetSampleCount())
				}
			}
		}
		return total
	}
	ratio := "none observed"
	for _, f := range families {
		if f.GetName() == prommetrics.DeletionAgeRatioName {
			h := f.GetMetric()[0].GetHistogram()
			if n := h.GetSampleCount(); n > 0 {
				ratio = fmt.Sprintf("%d observed, mean %.2f", n, h.GetSampleSum()/float64(n))
			}
		}
	}
	const syncs = prommetrics.ReconcileTotalName
	return fmt.Sprintf("%.0f syncs (%.0f requeued to wait for the cache, %.0f failed), %.0f pods created, %.0f pods deleted, %.0f queue adds, %.0f retries, deletion-age ratio: %s",
		sum(syncs), sum(syncs, prommetrics.ResultLabel, prommetrics.ResultRequeue), sum(prommetrics.ReconcileErrorsName),
		sum(prommetrics.PodsCreatedName), sum(prommetrics.PodsDeletedName),
		sum(prommetrics.AddsName), sum(prommetrics.RetriesName), ratio)
}

func hasLabel(labels []*dto.LabelPair, name, value string) bool {
	for _, l := range labels {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}
