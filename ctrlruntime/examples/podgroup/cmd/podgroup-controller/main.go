// Command podgroup-controller runs the PodGroup controller in a
// controller-runtime manager, with leader election, the metrics endpoint
// (ctrlkit's queue reports controller-runtime's workqueue metrics there) and
// health probes. Install the library's examples/podgroup/crd.yaml first.
package main

import (
	"flag"
	"net/http"
	"os"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/podgroup"
)

func main() {
	var o options
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", "127.0.0.1:8080", "address the metrics endpoint binds to, loopback only by default (metrics are unauthenticated; open them with care); 0 disables it")
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "address the health probes bind to")
	flag.BoolVar(&o.leaderElect, "leader-elect", true, "run only while holding the leader lease")
	flag.StringVar(&o.leaseNamespace, "leader-election-namespace", "", "namespace of the leader lease; defaults to the pod's own namespace in a cluster")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("podgroup-controller")

	if err := run(o); err != nil {
		log.Error(err, "exiting")
		os.Exit(1)
	}
}

type options struct {
	metricsAddr, probeAddr string
	leaderElect            bool
	leaseNamespace         string
	// mapper replaces the manager's RESTMapper (discovery) when set.
	mapper func(*rest.Config, *http.Client) (meta.RESTMapper, error)
}

func run(o options) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	mgr, err := newManager(cfg, o)
	if err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

// newManager builds the manager and registers the controller and probes.
func newManager(cfg *rest.Config, o options) (ctrl.Manager, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := podgroup.AddToScheme(scheme); err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress:        o.probeAddr,
		LeaderElection:                o.leaderElect,
		LeaderElectionID:              "podgroup-controller.example.ctrlkit.io",
		LeaderElectionNamespace:       o.leaseNamespace,
		LeaderElectionReleaseOnCancel: true,
		MapperProvider:                o.mapper,
	})
	if err != nil {
		return nil, err
	}
	if _, err := podgroup.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}
