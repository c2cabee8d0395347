package shardcr_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Member runs shard's loop and Resync a goroutine per controller; goleak
// checks both end with their contexts.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
