package podset

import (
	"testing"

	"github.com/ctrlkit/ctrlkit/internal/purecore"
)

// Reconcile decides and writes, and never reaches a work queue: the
// driver (controller.go), the informer handlers that fill the queue
// (handlers.go) and the queue's options (options.go) are the only files
// that may.
func TestCoreReachesNoQueue(t *testing.T) {
	found, err := purecore.Check(".", "controller.go", "handlers.go", "options.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range found {
		t.Errorf("%s; the core must not reach a queue", ref)
	}
}
