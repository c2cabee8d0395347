// Command replicaset-controller runs the ctrlkit example ReplicaSet controller.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "replicaset-controller: not built yet")
}
