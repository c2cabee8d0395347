package podgroup_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/podgroup"
)

// Adding the PodGroup controller to a manager; cmd/podgroup-controller is
// the whole program. Setting it up resolves the pod and PodGroup kinds
// through the manager's RESTMapper, which asks the API server, so this is
// compiled, not run.
func Example() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = podgroup.AddToScheme(scheme)
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := podgroup.SetupWithManager(mgr)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Name())
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fmt.Println(err)
	}
}
