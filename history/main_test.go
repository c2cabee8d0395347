package history

import (
	"testing"

	"go.uber.org/goleak"
)

// The package starts no goroutine of its own; goleak keeps it that way.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
