package validation

import (
	"testing"

	"go.uber.org/goleak"
)

// ValidatePodTemplateWithServer runs its create on a goroutine of its own
// (the deadline's); goleak checks that none outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
