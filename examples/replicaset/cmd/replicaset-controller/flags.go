package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/shard"
)

// Kinds accepted by --kind.
const (
	kindReplicaSet            = "replicaset"
	kindReplicationController = "replicationcontroller"
)

// kindNames are the names a --kind goes by, upstream's where it has them:
// its work queue's, its events' source, its API group and resource.
type kindNames struct{ queue, events, group, resource string }

var kinds = map[string]kindNames{
	kindReplicaSet:            {"replicaset", "replicaset-controller", "apps", "replicasets"},
	kindReplicationController: {"replicationmanager", "replication-controller", "", "replicationcontrollers"},
}

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
	profiling      bool
	metrics        *controllerMetrics // set by the simulated mode to read back; else made by serve
	drainTimeout   time.Duration
	lease          leaseConfig
	shard          shardConfig
	sim            simOptions
	inClusterCfg   func() (*rest.Config, error)
	getenv         func(string) string
}

func newFlagSet(o *options, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("replicaset-controller", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "path to a kubeconfig; without it and outside a cluster (KUBERNETES_SERVICE_HOST unset), a simulated cluster is used")
	fs.StringVar(&o.kind, "kind", kindReplicaSet, "owner kind to manage: replicaset or replicationcontroller")
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
	fs.BoolVar(&o.lease.enabled, "leader-elect", false, "run only while holding a coordination.k8s.io Lease")
	fs.StringVar(&o.lease.namespace, "leader-elect-resource-namespace", defaultLeaseNamespace(), "namespace of the Lease")
	fs.StringVar(&o.lease.name, "leader-elect-resource-name", "ctrlkit-replicaset-controller", "name of the Lease")
	fs.DurationVar(&o.lease.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long a standby waits before taking over a lease that was not renewed")
	fs.DurationVar(&o.lease.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader keeps trying to renew before giving up")
	fs.DurationVar(&o.lease.retryPeriod, "leader-elect-retry-period", 2*time.Second, "wait between lease acquisition or renewal attempts")
	fs.StringVar(&o.shard.ring, "shard-ring", "", "join this ring of replicas and manage only the owners in this replica's share of the hash space, instead of electing one leader (excludes --leader-elect)")
	fs.StringVar(&o.shard.by, "shard-by", shardByUID, "what spreads owners over the ring: uid (each owner by its UID, its pods follow their controller) or namespace (whole namespaces)")
	fs.StringVar(&o.shard.namespace, "shard-lease-namespace", defaultLeaseNamespace(), "namespace of the ring's Leases, one per replica")
	fs.StringVar(&o.shard.identity, "shard-identity", defaultShardIdentity(), "this replica's unique name in the ring (default: $POD_NAME, else the host name)")
	fs.DurationVar(&o.shard.leaseDuration, "shard-lease-duration", shard.DefaultLeaseDuration, "how long a replica's share stays its own after its last renewal; whole seconds")
	fs.DurationVar(&o.shard.renewInterval, "shard-renew-interval", shard.DefaultRenewInterval, "how often a replica renews its Lease and recomputes the shares")
	fs.DurationVar(&o.shard.safetyMargin, "shard-safety-margin", shard.DefaultSafetyMargin, "how much before its Lease expires a replica stops writing, and how long a range it gave up stays claimed after its last write: covers clock skew between replicas and writes still landing after they were cancelled")
	fs.DurationVar(&o.shard.sweepInterval, "shard-sweep-interval", 30*time.Second, "how often a replica queues every owner of its share whose status lags its spec, a bound on any missed event")
	o.sim.addFlags(fs)
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
	if _, ok := kinds[o.kind]; !ok {
		errs = append(errs, fmt.Errorf("--kind must be %s or %s, not %q", kindReplicaSet, kindReplicationController, o.kind))
	}
	if o.workers < 1 {
		errs = append(errs, fmt.Errorf("--workers must be at least 1, not %d", o.workers))
	}
	if o.burst < 1 {
		errs = append(errs, fmt.Errorf("--burst-replicas must be at least 1, not %d", o.burst))
	}
	// NaN compares false with everything, so "not > 0" refuses it too.
	if !(o.qps > 0) || math.IsInf(o.qps, 1) {
		errs = append(errs, fmt.Errorf("--kube-api-qps must be a positive finite number, not %v", o.qps))
	}
	if o.apiBurst < 1 {
		errs = append(errs, fmt.Errorf("--kube-api-burst must be at least 1, not %d", o.apiBurst))
	}
	if o.metricsAddr != "" {
		if err := checkHostPort(o.metricsAddr); err != nil {
			errs = append(errs, fmt.Errorf("--metrics-addr: %w (an empty address disables the metrics server)", err))
		}
	} else if o.profiling {
		errs = append(errs, fmt.Errorf("--profiling serves Go's profiles on --metrics-addr, which is empty: set an address or drop --profiling"))
	}
	if o.requestTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-timeout must be positive, not %v: a write without a deadline can hold a worker forever", o.requestTimeout))
	}
	if o.sim.nodes < 1 || o.sim.delay < 0 || o.sim.timeout <= 0 || o.drainTimeout < 0 {
		errs = append(errs, fmt.Errorf("--sim-nodes must be at least 1 and durations must not be negative"))
	}
	if o.lease.enabled && (o.lease.name == "" || o.lease.namespace == "") {
		errs = append(errs, fmt.Errorf("--leader-elect needs a lease name and namespace"))
	}
	if o.shard.enabled() {
		if o.lease.enabled {
			errs = append(errs, fmt.Errorf("--shard-ring and --leader-elect exclude each other: a ring spreads the owners over every replica, an election gives them all to one"))
		}
		errs = append(errs, o.shard.validate())
	}
	return errors.Join(errs...)
}

// checkHostPort checks that addr is a host:port a TCP server can listen
// on, port 0 to 65535 in digits; whether the port is free is checked when
// the server binds it (canListen).
func checkHostPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("address %s: the port must be a number from 0 to 65535, not %q", addr, port)
	}
	return nil
}
