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
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// Kinds accepted by --kind.
const (
	kindReplicaSet            = "replicaset"
	kindReplicationController = "replicationcontroller"
)

// options is every flag of the binary.
type options struct {
	kubeconfig string
	kind       string
	namespace  string
	workers    int
	burst      int
	qps        float64
	apiBurst   int
	// requestTimeout bounds each API request but the informers' watches.
	requestTimeout time.Duration
	healthAddr     string
	metricsAddr    string
	metrics        *controllerMetrics // set by the simulated mode to read back; else made by serve
	drainTimeout   time.Duration
	lease          leaseConfig

	demo         bool
	simDelay     time.Duration
	simNodes     int
	demoTimeout  time.Duration
	inClusterCfg func() (*rest.Config, error)
	getenv       func(string) string
}

func newFlagSet(o *options, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("replicaset-controller", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "path to a kubeconfig; without it and outside a cluster (KUBERNETES_SERVICE_HOST unset), a simulated cluster is used")
	fs.StringVar(&o.kind, "kind", kindReplicaSet, "owner kind to manage: replicaset or replicationcontroller")
	fs.StringVar(&o.namespace, "namespace", "", "namespace to watch (default: all namespaces)")
	fs.IntVar(&o.workers, "workers", replicaset.DefaultWorkers, "owners synced concurrently")
	fs.IntVar(&o.burst, "burst-replicas", replicaset.DefaultBurstReplicas, "maximum pods created or deleted in one sync")
	fs.Float64Var(&o.qps, "kube-api-qps", 20, "steady queries per second to the API server")
	fs.IntVar(&o.apiBurst, "kube-api-burst", 30, "burst of queries to the API server")
	fs.DurationVar(&o.requestTimeout, "kube-api-timeout", 30*time.Second, "timeout of each API request (writes, reads, events, leader election); the informers' watches are exempt")
	fs.StringVar(&o.healthAddr, "health-addr", "127.0.0.1:8081", "address serving /healthz and /readyz only (empty disables)")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "127.0.0.1:8080", "address serving /metrics only; loopback by default, as metrics need not be open to whoever reaches the pod (empty disables)")
	fs.DurationVar(&o.drainTimeout, "drain-timeout", replicaset.DefaultDrainTimeout, "how long a shutdown keeps syncing queued owners")
	fs.BoolVar(&o.lease.enabled, "leader-elect", false, "run only while holding a coordination.k8s.io Lease")
	fs.StringVar(&o.lease.namespace, "leader-elect-resource-namespace", defaultLeaseNamespace(), "namespace of the Lease")
	fs.StringVar(&o.lease.name, "leader-elect-resource-name", "ctrlkit-replicaset-controller", "name of the Lease")
	fs.DurationVar(&o.lease.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long a standby waits before taking over a lease that was not renewed")
	fs.DurationVar(&o.lease.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader keeps trying to renew before giving up")
	fs.DurationVar(&o.lease.retryPeriod, "leader-elect-retry-period", 2*time.Second, "wait between lease acquisition or renewal attempts")
	fs.BoolVar(&o.demo, "demo", true, "simulated mode only: play the scripted demo and exit; false keeps the simulated cluster running idle")
	fs.DurationVar(&o.simDelay, "sim-startup-delay", simcluster.DefaultStartupDelay, "simulated mode only: time a new pod takes to become Running and Ready")
	fs.IntVar(&o.simNodes, "sim-nodes", simcluster.DefaultNodes, "simulated mode only: number of fake nodes")
	fs.DurationVar(&o.demoTimeout, "demo-timeout", 50*time.Second, "simulated mode only: give up on the demo after this long")
	klog.InitFlags(fs) // -v, -vmodule, -logtostderr and the rest of klog's flags
	return fs
}

// defaultLeaseNamespace is the pod's own namespace when the Deployment passes
// it through the downward API, else kube-system.
func defaultLeaseNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "kube-system"
}

func (o *options) validate() error {
	var errs []error
	if o.kind != kindReplicaSet && o.kind != kindReplicationController {
		errs = append(errs, fmt.Errorf("--kind must be %s or %s, not %q", kindReplicaSet, kindReplicationController, o.kind))
	}
	if o.workers < 1 {
		errs = append(errs, fmt.Errorf("--workers must be at least 1, not %d", o.workers))
	}
	if o.burst < 1 {
		errs = append(errs, fmt.Errorf("--burst-replicas must be at least 1, not %d", o.burst))
	}
	if o.qps <= 0 || o.apiBurst < 1 {
		errs = append(errs, fmt.Errorf("--kube-api-qps must be positive and --kube-api-burst at least 1"))
	}
	if o.requestTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-timeout must be positive, not %v: a write without a deadline can hold a worker forever", o.requestTimeout))
	}
	if o.simNodes < 1 || o.simDelay < 0 || o.demoTimeout <= 0 || o.drainTimeout < 0 {
		errs = append(errs, fmt.Errorf("--sim-nodes must be at least 1 and durations must not be negative"))
	}
	if o.lease.enabled && (o.lease.name == "" || o.lease.namespace == "") {
		errs = append(errs, fmt.Errorf("--leader-elect needs a lease name and namespace"))
	}
	return errors.Join(errs...)
}

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
	ctx = klog.NewContext(ctx, klog.Background())
	cfg, err := o.restConfig()
	if err != nil {
		fmt.Fprintln(stderr, "replicaset-controller:", err)
		return 1
	}
	if cfg == nil {
		if o.lease.enabled {
			// Two simulated clusters never share a lease: leader election
			// there would only pretend to protect anything.
			fmt.Fprintln(stderr, "replicaset-controller: --leader-elect needs a real cluster (--kubeconfig or in-cluster); the simulated cluster refuses it")
			return 2
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
	if err := preflight(ctx, cfg, o); err != nil {
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

// restConfig returns the config of the cluster to manage, or nil for the
// simulated cluster. Only --kubeconfig and in-cluster config count: a
// KUBECONFIG in the environment is deliberately ignored, so that trying the
// demo can never touch the cluster a developer happens to be logged into.
// The simulated cluster is chosen only when no cluster is configured at all;
// a configuration that is there but does not load (a pod without its
// service-account token) is an error, never a silent demo.
func (o *options) restConfig() (*rest.Config, error) {
	var cfg *rest.Config
	switch {
	case o.kubeconfig != "":
		c, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("loading --kubeconfig: %w", err)
		}
		cfg = c
	case o.getenv("KUBERNETES_SERVICE_HOST") != "":
		c, err := o.inClusterCfg()
		if err != nil {
			return nil, fmt.Errorf("loading the in-cluster config (KUBERNETES_SERVICE_HOST is set): %w", err)
		}
		cfg = c
	default:
		return nil, nil
	}
	cfg.QPS = float32(o.qps)
	cfg.Burst = o.apiBurst
	cfg.UserAgent = "ctrlkit-replicaset-controller"
	return cfg, nil
}

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
		replicaset.WithEventRecorder(recorder),
		replicaset.WithMetrics(metrics),
		replicaset.WithMetricsProvider(metrics.queue),
		replicaset.WithWorkers(o.workers),
		replicaset.WithBurstReplicas(o.burst),
		replicaset.WithDrainTimeout(o.drainTimeout),
	}, extra...)
	ctrl, err := newController(ctx, o.kind, client, factory, opts)
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
		h, err := startMetricsServer(o.metricsAddr, metrics.handler())
		switch {
		case err == nil:
			defer h.stop()
		case simulated:
			klog.FromContext(ctx).Info("Metrics server disabled", "reason", err.Error())
		default:
			return err
		}
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
	if !o.lease.enabled {
		work(ctx)
		return nil
	}
	return runWithLease(ctx, drain, client, o.lease, watchdog, work)
}

func newController(ctx context.Context, kind string, client kubernetes.Interface, f informers.SharedInformerFactory, opts []replicaset.Option) (*replicaset.Controller, error) {
	if kind == kindReplicationController {
		return replicaset.NewReplicationManager(ctx, client, f.Core().V1().Pods(), f.Core().V1().ReplicationControllers(), opts...)
	}
	return replicaset.NewReplicaSetController(ctx, client, f.Core().V1().Pods(), f.Apps().V1().ReplicaSets(), opts...)
}
