package childset_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Controller starts workers and the queue's delay loop; goleak checks that
// Run leaves none behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
