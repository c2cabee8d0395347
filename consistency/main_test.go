package consistency

import (
	"testing"

	"go.uber.org/goleak"
)

// The guard starts no goroutine; goleak keeps it that way.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
