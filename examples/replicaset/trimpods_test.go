package replicaset

import (
	"testing"

	"github.com/ctrlkit/ctrlkit/internal/trimtest"
)

// TestControllerOnTrimmedPods runs this package's tests again on pods passed
// through podset.TrimPod: the env's pod informer transforms what it receives
// and addPods trims what it adds. If either controller read a field TrimPod
// drops, some decision would change and a test would fail.
func TestControllerOnTrimmedPods(t *testing.T) {
	if !trimtest.Enabled() {
		trimtest.RunPackage(t)
	}
}
