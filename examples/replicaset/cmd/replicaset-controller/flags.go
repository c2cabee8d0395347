package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/process"
	"github.com/ctrlkit/ctrlkit/shard"
)

// options is every flag of the binary.
type options struct {
	kubeconfig, namespace, healthAddr, metricsAddr string
	kind                                           replicaset.Kind
	workers, burst, apiBurst                       int
	qps                                            float64
	requestTimeout, drainTimeout                   time.Duration // requestTimeout: each API request but the watches
	profiling                                      bool
	lease                                          process.LeaderElection
	shard                                          shard.Flags
	sim                                            simOptions
	metrics                                        *metrics // set by the simulated mode to read back; else made by serve
	inClusterCfg                                   func() (*rest.Config, error)
	getenv                                         func(string) string
}

func newFlagSet(o *options, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("replicaset-controller", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "path to a kubeconfig; without it and outside a cluster (KUBERNETES_SERVICE_HOST unset), a simulated cluster is used")
	fs.StringVar((*string)(&o.kind), "kind", string(replicaset.ReplicaSets), "owner kind to manage: replicaset or replicationcontroller")
	fs.StringVar(&o.namespace, "namespace", "", "namespace to watch (default: all namespaces)")
	fs.IntVar(&o.workers, "workers", podset.DefaultWorkers, "owners synced concurrently")
	fs.IntVar(&o.burst, "burst-replicas", podset.DefaultBurstReplicas, "maximum pods created or deleted in one sync")
	fs.Float64Var(&o.qps, "kube-api-qps", 20, "steady queries per second to the API server")
	fs.IntVar(&o.apiBurst, "kube-api-burst", 30, "burst of queries to the API server")
	fs.DurationVar(&o.requestTimeout, "kube-api-timeout", 30*time.Second, "timeout of each API request (writes, reads, events, leader election); the informers' watches are exempt")
	fs.StringVar(&o.healthAddr, "health-addr", "127.0.0.1:8081", "address serving /healthz and /readyz only (empty disables)")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "127.0.0.1:8080", "address serving /metrics only; loopback by default, as metrics need not be open to whoever reaches the pod (empty disables)")
	fs.BoolVar(&o.profiling, "profiling", false, "serve Go's profiles under /debug/pprof/ on --metrics-addr")
	fs.DurationVar(&o.drainTimeout, "drain-timeout", podset.DefaultDrainTimeout, "how long a shutdown keeps syncing queued owners")
	o.lease.AddFlags(fs, "ctrlkit-replicaset-controller")
	o.shard.AddFlags(fs, process.PodNamespace(), process.PodName())
	o.sim.addFlags(fs)
	klog.InitFlags(fs) // -v, -vmodule, -logtostderr and the rest of klog's flags
	return fs
}

// validate checks every flag before anything starts.
func (o *options) validate() error {
	errs := []error{o.lease.Validate()}
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(!o.kind.Valid(), "--kind must be %s or %s, not %q", replicaset.ReplicaSets, replicaset.ReplicationControllers, o.kind)
	check(o.workers < 1, "--workers must be at least 1, not %d", o.workers)
	check(o.burst < 1, "--burst-replicas must be at least 1, not %d", o.burst)
	// NaN compares false with everything, so "not > 0" refuses it too.
	check(!(o.qps > 0) || math.IsInf(o.qps, 1), "--kube-api-qps must be a positive finite number, not %v", o.qps)
	check(o.apiBurst < 1, "--kube-api-burst must be at least 1, not %d", o.apiBurst)
	check(o.requestTimeout <= 0, "--kube-api-timeout must be positive, not %v: a write without a deadline can hold a worker forever", o.requestTimeout)
	check(o.sim.nodes < 1 || o.sim.delay < 0 || o.sim.timeout <= 0 || o.drainTimeout < 0, "--sim-nodes must be at least 1 and durations must not be negative")
	check(o.metricsAddr == "" && o.profiling, "--profiling serves Go's profiles on --metrics-addr, which is empty: set an address or drop --profiling")
	if o.metricsAddr != "" {
		if err := process.CheckAddr(o.metricsAddr); err != nil {
			errs = append(errs, fmt.Errorf("--metrics-addr: %w (an empty address disables the metrics server)", err))
		}
	}
	if o.shard.Enabled() {
		check(o.lease.Enabled, "--shard-ring and --leader-elect exclude each other: a ring spreads the owners over every replica, an election gives them all to one")
		errs = append(errs, o.shard.Validate())
	}
	return errors.Join(errs...)
}

// restConfig returns the config of the cluster to manage, or nil for the
// simulated cluster. Only --kubeconfig and in-cluster config count: a
// KUBECONFIG in the environment is deliberately ignored, so that trying the
// demo can never touch the cluster a developer happens to be logged into. A
// configuration that is there but does not load (a pod without its
// service-account token) is an error, never a silent demo.
func (o *options) restConfig() (cfg *rest.Config, err error) {
	switch {
	case o.kubeconfig != "":
		if cfg, err = clientcmd.BuildConfigFromFlags("", o.kubeconfig); err != nil {
			return nil, fmt.Errorf("loading --kubeconfig: %w", err)
		}
	case o.getenv("KUBERNETES_SERVICE_HOST") != "":
		if cfg, err = o.inClusterCfg(); err != nil {
			return nil, fmt.Errorf("loading the in-cluster config (KUBERNETES_SERVICE_HOST is set): %w", err)
		}
	default:
		return nil, nil
	}
	cfg.QPS, cfg.Burst, cfg.UserAgent = float32(o.qps), o.apiBurst, "ctrlkit-replicaset-controller"
	return cfg, nil
}

// access is every permission preflight checks: the controller's (the rules
// deploy/rbac-base.yaml and deploy/rbac-<kind>.yaml grant), and the Leases
// of leader election or of the ring (deploy/rbac-shard.yaml).
func (o *options) access() []process.Access {
	need := append(o.kind.Access(o.namespace), o.lease.Access()...)
	if o.shard.Enabled() {
		// A member gets its own Lease when it joins, creates and renews it,
		// lists the ring's and deletes its own when it leaves; the names
		// follow the pods', so no rule can name them.
		leases := process.Access{Group: "coordination.k8s.io", Resource: "leases", Namespace: o.shard.Namespace}
		need = append(need, process.Accesses(leases, "get", "list", "create", "update", "delete")...)
	}
	return need
}
