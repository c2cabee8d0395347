package gang_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The controller starts workers and informers; every test stops them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
