package demo_test

import (
	"fmt"

	"github.com/ctrlkit/ctrlkit/examples/replicaset/cmd/replicaset-controller/internal/demo"
)

// A step of the demo is over once the owner has all it asked for, and its
// status says so.
func ExampleProgress_Settled() {
	p := demo.Progress{Desired: 5, Current: 5, Ready: 5, Available: 5, UpToDate: true, Pods: 5, Running: 5}
	fmt.Println(p, p.Settled())
	p.UpToDate = false // the status predates the last scale
	fmt.Println(p.Settled())
	// Output:
	// desired=  5 current=  5 ready=  5 available=  5 true
	// false
}
