package expectations

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A non-positive TTL is a programmer error: the option panics, in the
// caller's goroutine, rather than silently keeping the default.
func TestNonPositiveTTLPanics(t *testing.T) {
	for _, ttl := range []time.Duration{0, -time.Second} {
		assert.PanicsWithValue(t, fmt.Sprintf("expectations: WithTTL: non-positive TTL %v", ttl), func() {
			WithTTL(ttl)
		})
	}
	assert.NotPanics(t, func() { NewControllerExpectations(WithTTL(time.Nanosecond)) })
}

// A nil clock has no documented meaning, so it panics at the option, as a
// nil cache panics at NewUIDTrackingControllerExpectations; a nil Option is
// ignored.
func TestOptionConvention(t *testing.T) {
	assert.PanicsWithValue(t, "expectations: WithClock: nil clock; omit the option for the real clock",
		func() { WithClock(nil) })
	var none Option
	c := NewControllerExpectations(nil, WithTTL(time.Minute), none)
	require.NoError(t, c.ExpectCreations("k", 1))
	assert.False(t, c.SatisfiedExpectations("k"))
	assert.PanicsWithValue(t, "expectations: NewUIDTrackingControllerExpectations: nil cache",
		func() { NewUIDTrackingControllerExpectations(nil) })
}

// Negative counts are legal upstream (SetExpectations takes any int and the
// record is fulfilled at add <= 0 and del <= 0); ctrlkit matches that rather
// than rejecting them.
func TestNegativeCounts(t *testing.T) {
	c, _, _ := newTestCache(t, 0)
	require.NoError(t, c.ExpectCreations("k", -3))
	assert.True(t, c.SatisfiedExpectations("k"), "a negative expectation is already met")
	c.RaiseExpectations("k", 3, 0)
	assert.True(t, c.SatisfiedExpectations("k"))
	c.RaiseExpectations("k", 1, 0)
	assert.False(t, c.SatisfiedExpectations("k"))
	c.LowerExpectations("k", -1, 0) // a negative lower raises
	r, _ := c.Pending("k")
	assert.Equal(t, int64(2), r.Adds)
}
