// Command replicaset-controller runs ctrlkit's example ReplicaSet (or
// ReplicationController) controller.
//
// With --kubeconfig, or inside a pod (KUBERNETES_SERVICE_HOST set), it manages
// that cluster, and fails if that configuration does not load. With neither
// it starts an embedded, in-memory SIMULATED cluster and
// plays a scripted demo: create a ReplicaSet of 10, scale it to 100, delete
// 10 pods by hand, give a few pods a low deletion cost, then scale down to 5
// while explaining which pods go and why. It exits 0 when the demo is done;
// --demo=false keeps the simulated cluster running idle instead. The simulated
// cluster refuses --leader-elect.
//
// /healthz and /readyz are served on --health-addr (the probes' port), and
// /metrics on its own --metrics-addr, loopback by default: the metrics stay
// private to the pod unless an operator opens them on purpose. /metrics serves
// the work queue's workqueue_* family under the queue name "replicaset" or
// "replicationmanager", upstream's
// replicaset_controller_sorting_deletion_age_ratio, sync counts and times as
// controller-runtime's controller_runtime_reconcile_total, _errors_total and
// _time_seconds, and the pods the controller created and deleted as
// ctrlkit_controller_pods_created_total and _deleted_total (counted from its
// SuccessfulCreate and SuccessfulDelete events). The demo ends with a summary
// of them.
//
// SIGINT or SIGTERM drains the work queue (for at most --drain-timeout),
// releases the leader lease and exits 0; a second signal during the drain
// stops at once and exits 1. Losing the leader lease stops at once, without
// draining or releasing, and exits 1: another replica may already lead. It
// waits two seconds at most for the workers, so a hung call cannot keep a
// deposed leader alive. Every API request but the informers' watches is
// bounded by --kube-api-timeout.
//
// Reading the code: the production path is main.go (entry point and exit
// codes), flags.go, clients.go (which cluster, and the request timeout),
// preflight.go (reachability and permissions), serve.go (the controller with
// its health and metrics servers, under leader election when asked), then
// leader.go, health.go, metrics.go, events.go and sharded.go (with
// --shard-ring, the controller of one share, which shard.Runner runs per
// share and restarts when the share changes). The simulated mode is
// simulated.go (its flags, and that same serve on an in-memory cluster, with
// a metrics summary at the end) and the scripted demo in internal/demo.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, stopNow := context.WithCancel(context.Background())
	drain := make(chan struct{})
	go relaySignals(sigs, drain, stopNow)
	code := run(ctx, drain, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	stopNow()
	klog.Flush()
	os.Exit(code)
}

// relaySignals turns the first signal into a graceful stop (drain is closed)
// and the second into an immediate one (stopNow), so an operator who does
// not want to wait for the drain can interrupt again.
func relaySignals(sigs <-chan os.Signal, drain chan<- struct{}, stopNow func()) {
	<-sigs
	close(drain)
	<-sigs
	stopNow()
}

// run is main without the process: it parses args and runs until the demo
// ends, drain is closed (stop gracefully) or ctx is done (stop at once). It
// returns the exit code: 0 after a graceful stop or the demo, 1 after an
// immediate stop, a lost lease or an error, 2 for bad flags.
func run(ctx context.Context, drain <-chan struct{}, args []string, stdout, stderr io.Writer) int {
	o := options{inClusterCfg: rest.InClusterConfig, getenv: os.Getenv}
	fs := newFlagSet(&o, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := o.validate(); err != nil {
		fmt.Fprintln(stderr, "replicaset-controller:", err)
		return 2
	}
	if o.metricsAddr != "" {
		if err := canListen(o.metricsAddr); err != nil {
			fmt.Fprintf(stderr, "replicaset-controller: --metrics-addr %s is unusable: %v (an empty address disables the metrics server)\n", o.metricsAddr, err)
			return 2
		}
	}
	ctx = klog.NewContext(ctx, klog.Background())
	cfg, err := o.restConfig()
	if err != nil {
		fmt.Fprintln(stderr, "replicaset-controller:", err)
		return 1
	}
	if cfg == nil {
		// Two simulated clusters never share a Lease: leader election or a
		// ring there would only pretend to protect anything.
		for flag, set := range map[string]bool{"--leader-elect": o.lease.enabled, "--shard-ring": o.shard.enabled()} {
			if set {
				fmt.Fprintf(stderr, "replicaset-controller: %s needs a real cluster (--kubeconfig or in-cluster); the simulated cluster refuses it\n", flag)
				return 2
			}
		}
		if err := runSimulated(ctx, drain, o, stdout); err != nil {
			fmt.Fprintln(stderr, "replicaset-controller: SIMULATED:", err)
			return 1
		}
		return exitCode(ctx, stderr)
	}
	cs, err := newClients(cfg, o.requestTimeout)
	if err != nil {
		fmt.Fprintln(stderr, "replicaset-controller:", err)
		return 1
	}
	if err := preflight(ctx, cfg, o, preflightTimeout); err != nil {
		fmt.Fprintln(stderr, "replicaset-controller:", err)
		return 1
	}
	if err := serve(ctx, drain, o, cs, nil, false); err != nil {
		fmt.Fprintln(stderr, "replicaset-controller:", err)
		return 1
	}
	return exitCode(ctx, stderr)
}

// exitCode is 1 when the run was stopped at once (ctx done: a second
// signal), since queued work was dropped, and 0 otherwise.
func exitCode(ctx context.Context, stderr io.Writer) int {
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "replicaset-controller: stopped at once; queued work was dropped")
		return 1
	}
	return 0
}
