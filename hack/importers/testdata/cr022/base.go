// Command cr022 stands for a controller on controller-runtime v0.22 that
// imports ctrlkit's childsetcr (ctrlkit.go). It is built, never run.
package main

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
)

func main() {
	builder := ctrl.NewControllerManagedBy
	fmt.Println(builder != nil, reconciler)
}
