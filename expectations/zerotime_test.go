package expectations

import (
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"
)

// A fake clock that starts at the zero time is an ordinary clock: records
// set at that instant expire one TTL later like any other.
func TestFakeClockAtZeroTimeExpires(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Time{})
	c := NewControllerExpectations(WithClock(clk), WithTTL(time.Minute), WithLogger(logr.Discard()))
	require.NoError(t, c.ExpectCreations("ns/a", 1))
	assert.False(t, c.SatisfiedExpectations("ns/a"))
	clk.Step(time.Minute)
	assert.False(t, c.SatisfiedExpectations("ns/a"), "expiry is strictly after the TTL")
	clk.Step(time.Nanosecond)
	assert.True(t, c.SatisfiedExpectations("ns/a"), "expired one TTL after the zero time")
	_, exists, err := c.GetExpectations("ns/a")
	require.NoError(t, err)
	assert.False(t, exists)
}
