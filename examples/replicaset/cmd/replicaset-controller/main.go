// Command replicaset-controller runs ctrlkit's example ReplicaSet (or
// ReplicationController) controller.
//
// With --kubeconfig, or inside a pod (in-cluster config), it manages that
// cluster. With neither it starts an embedded, in-memory SIMULATED cluster and
// plays a scripted demo: create a ReplicaSet of 10, scale it to 100, delete
// 10 pods by hand, give a few pods a low deletion cost, then scale down to 5
// while explaining which pods go and why. It exits 0 when the demo is done;
// --demo=false keeps the simulated cluster running idle instead.
//
// SIGINT or SIGTERM drains the work queue, releases the leader lease and
// exits 0.
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
	kubeconfig   string
	kind         string
	namespace    string
	workers      int
	burst        int
	qps          float64
	apiBurst     int
	healthAddr   string
	drainTimeout time.Duration
	lease        leaseConfig

	demo         bool
	simDelay     time.Duration
	simNodes     int
	demoTimeout  time.Duration
	inClusterCfg func() (*rest.Config, error)
}

func newFlagSet(o *options, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("replicaset-controller", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "path to a kubeconfig; without it and outside a cluster, a simulated cluster is used")
	fs.StringVar(&o.kind, "kind", kindReplicaSet, "owner kind to manage: replicaset or replicationcontroller")
	fs.StringVar(&o.namespace, "namespace", "", "namespace to watch (default: all namespaces)")
	fs.IntVar(&o.workers, "workers", replicaset.DefaultWorkers, "owners synced concurrently")
	fs.IntVar(&o.burst, "burst-replicas", replicaset.DefaultBurstReplicas, "maximum pods created or deleted in one sync")
	fs.Float64Var(&o.qps, "kube-api-qps", 20, "steady queries per second to the API server")
	fs.IntVar(&o.apiBurst, "kube-api-burst", 30, "burst of queries to the API server")
	fs.StringVar(&o.healthAddr, "health-addr", ":8081", "address serving /healthz and /readyz (empty disables)")
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
	if o.simNodes < 1 || o.simDelay < 0 || o.demoTimeout <= 0 || o.drainTimeout < 0 {
		errs = append(errs, fmt.Errorf("--sim-nodes must be at least 1 and durations must not be negative"))
	}
	if o.lease.enabled && (o.lease.name == "" || o.lease.namespace == "") {
		errs = append(errs, fmt.Errorf("--leader-elect needs a lease name and namespace"))
	}
	return errors.Join(errs...)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	klog.Flush()
	os.Exit(code)
}

// run is main without the process: it parses args, runs until ctx is done
// (or the demo ends) and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o := options{inClusterCfg: rest.InClusterConfig}
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
		if err := runSimulated(ctx, o, stdout); err != nil {
			fmt.Fprintln(stderr, "replicaset-controller: SIMULATED:", err)
			return 1
		}
		return 0
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "replicaset-controller:", err)
		return 1
	}
	if err := serve(ctx, o, client, nil, false); err != nil {
		fmt.Fprintln(stderr, "replicaset-controller:", err)
		return 1
	}
	return 0
}

// restConfig returns the config of the cluster to manage, or nil for the
// simulated cluster. Only --kubeconfig and in-cluster config count: a
// KUBECONFIG in the environment is deliberately ignored, so that trying the
// demo can never touch the cluster a developer happens to be logged into.
func (o *options) restConfig() (*rest.Config, error) {
	var cfg *rest.Config
	switch {
	case o.kubeconfig != "":
		c, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("loading --kubeconfig: %w", err)
		}
		cfg = c
	default:
		c, err := o.inClusterCfg()
		if err != nil {
			return nil, nil
		}
		cfg = c
	}
	cfg.QPS = float32(o.qps)
	cfg.Burst = o.apiBurst
	cfg.UserAgent = "ctrlkit-replicaset-controller"
	return cfg, nil
}

// serve runs the controller (under a lease when asked) until ctx is done,
// with the health server alongside. simulated only relaxes the health server:
// the demo must not fail because the port is taken on a developer's machine.
func serve(ctx context.Context, o options, client kubernetes.Interface, extra []replicaset.Option, simulated bool) error {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(o.namespace))
	opts := append([]replicaset.Option{
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
	work := func(ctx context.Context) {
		leading.Store(true)
		factory.Start(ctx.Done())
		_ = ctrl.Run(ctx) // returns nil once drained; misuse is impossible here
		factory.Shutdown()
	}
	if !o.lease.enabled {
		work(ctx)
		return nil
	}
	return runWithLease(ctx, client, o.lease, watchdog, work)
}

func newController(ctx context.Context, kind string, client kubernetes.Interface, f informers.SharedInformerFactory, opts []replicaset.Option) (*replicaset.Controller, error) {
	if kind == kindReplicationController {
		return replicaset.NewReplicationManager(ctx, client, f.Core().V1().Pods(), f.Core().V1().ReplicationControllers(), opts...)
	}
	return replicaset.NewReplicaSetController(ctx, client, f.Core().V1().Pods(), f.Apps().V1().ReplicaSets(), opts...)
}
