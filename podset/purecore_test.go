package podset

import (
	"testing"

	"github.com/ctrlkit/ctrlkit/internal/purecore"
)

// The core (Reconciler: Reconcile and the Observe methods) decides and
// writes, and never reaches a work queue: the driver (controller.go) and
// the queue's options (options.go) are the only files that may.
func TestCoreReachesNoQueue(t *testing.T) {
	found, err := purecore.Check(".", "controller.go", "options.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range found {
		t.Errorf("%s; the core must not reach a queue", ref)
	}
}
