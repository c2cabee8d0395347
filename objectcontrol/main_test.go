package objectcontrol_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The package starts no goroutine; goleak keeps it that way.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
