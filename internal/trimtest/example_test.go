package trimtest_test

import (
	"fmt"

	"github.com/ctrlkit/ctrlkit/internal/trimtest"
)

// A package's test environment trims the pods it hands the controller only
// in the child process RunPackage starts.
func ExampleEnabled() {
	if trimtest.Enabled() {
		fmt.Println("running on trimmed pods")
	} else {
		fmt.Println("running on full pods")
	}
	// Output: running on full pods
}
