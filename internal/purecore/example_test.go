package purecore_test

import (
	"fmt"

	"github.com/ctrlkit/ctrlkit/internal/purecore"
)

// A core package's test runs the check over its own directory, naming the
// files allowed to drive a queue.
func Example() {
	found, err := purecore.Check(".", "purecore.go")
	fmt.Println(len(found), err)
	// Output: 0 <nil>
}
