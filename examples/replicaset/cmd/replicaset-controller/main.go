// Command replicaset-controller runs ctrlkit's example ReplicaSet (or
// ReplicationController) controller.
//
// With --kubeconfig, or inside a pod (KUBERNETES_SERVICE_HOST set), it manages
// that cluster, and fails if that configuration does not load. With neither
// it plays a scripted demo on an embedded, in-memory SIMULATED cluster and
// exits 0 when it is done (simulated.go, internal/demo); --demo=false keeps
// the simulated cluster running idle instead.
//
// /healthz and /readyz are served on --health-addr (the probes' port), and
// /metrics on its own --metrics-addr, loopback by default (the families are
// workqueue/prommetrics's, and Go's go_* and process_*). SIGINT or SIGTERM
// drains the work queue (for at most --drain-timeout), releases the leader
// lease and exits 0; a second signal stops at once and exits 1, and so does a
// lost lease (see process.RunWithLease). Every API request but the
// informers' watches is bounded by --kube-api-timeout.
//
// Reading the code: main.go (entry point and exit codes), flags.go (every
// flag, which cluster, the permissions preflight checks), serve.go (the
// controller with its health and metrics servers, under leader election or
// as a ring member). Packages process, shard and workqueue/prommetrics do the
// rest.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/process"
)

// preflightTimeout bounds each start-up check's request: a server that does
// not answer is reported in seconds, not after minutes of informer retries.
const preflightTimeout = 10 * time.Second

func main() {
	ctx, drain, stop := process.Signals(context.Background())
	code := run(ctx, drain, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	klog.Flush()
	os.Exit(code)
}

// run is main without the process: it parses args and runs until the demo
// ends, drain is closed (stop gracefully) or ctx is done (stop at once). It
// returns the exit code: 0 after a graceful stop or the demo, 1 after an
// immediate stop, a lost lease or an error, 2 for bad flags.
func run(ctx context.Context, drain <-chan struct{}, args []string, stdout, stderr io.Writer) int {
	o := options{inClusterCfg: rest.InClusterConfig, getenv: os.Getenv}
	if err := newFlagSet(&o, stderr).Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(code int, err error) int {
		fmt.Fprintln(stderr, "replicaset-controller:", err)
		return code
	}
	if err := o.validate(); err != nil {
		return fail(2, err)
	}
	// A binary asked for metrics must not run on without them.
	if o.metricsAddr != "" {
		if err := process.CanListen(o.metricsAddr); err != nil {
			return fail(2, fmt.Errorf("--metrics-addr %s is unusable: %w (an empty address disables the metrics server)", o.metricsAddr, err))
		}
	}
	ctx = klog.NewContext(ctx, klog.Background())
	cfg, err := o.restConfig()
	if err != nil {
		return fail(1, err)
	}
	if cfg == nil {
		// Two simulated clusters never share a Lease: leader election or a
		// ring there would only pretend to protect anything.
		if o.lease.Enabled || o.shard.Enabled() {
			return fail(2, errors.New("--leader-elect and --shard-ring need a real cluster (--kubeconfig or in-cluster); the simulated cluster refuses them"))
		}
		if _, err := simulate(ctx, drain, o, stdout); err != nil {
			return fail(1, fmt.Errorf("SIMULATED: %w", err))
		}
		return exitCode(ctx, stderr)
	}
	cs, err := process.NewClients(cfg, o.requestTimeout)
	if err == nil {
		err = process.Preflight(ctx, cfg, preflightTimeout, o.access())
	}
	if err == nil {
		err = serve(ctx, drain, o, cs, nil, false)
	}
	if err != nil {
		return fail(1, err)
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
