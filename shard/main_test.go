package shard

import (
	"testing"

	"go.uber.org/goleak"
)

// Member.Run starts a loop and Guard starts context timers; goleak checks
// that both end with their contexts.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
