package childset_test

import (
	"testing"

	"github.com/ctrlkit/ctrlkit/internal/purecore"
)

// The core decides and writes, and never reaches a work queue. Only
// driver.go (and options.go, which holds the driver's queue options as the
// convention puts every option there) may.
func TestCoreReachesNoQueue(t *testing.T) {
	found, err := purecore.Check(".", "driver.go", "options.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range found {
		t.Errorf("%s; the core must not reach a queue", ref)
	}
}
