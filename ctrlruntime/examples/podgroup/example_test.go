package podgroup_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/podgroup"
)

// Adding the PodGroup controller to a manager. Nothing talks to the API
// server until mgr.Start; cmd/podgroup-controller is the whole program.
func Example() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = podgroup.AddToScheme(scheme)
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
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
	fmt.Println(c.Name(), c.NeedLeaderElection())
	// Output: podgroup true
}
