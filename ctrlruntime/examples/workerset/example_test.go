package workerset_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/workerset"
)

// Adding the WorkerSet controller to a manager. Nothing talks to the API
// server until mgr.Start, which runs it with the manager's cache, client,
// queue and metrics.
func Example() {
	scheme := runtime.NewScheme()
	_ = workerset.AddToScheme(scheme)
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := workerset.SetupWithManager(mgr)
	fmt.Println(c != nil, err)
	// Output: true <nil>
}
