package expectations

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A non-positive TTL is a programmer error: construction panics rather than
// silently keeping the default.
func TestNonPositiveTTLPanics(t *testing.T) {
	for _, ttl := range []time.Duration{0, -time.Second} {
		assert.PanicsWithValue(t, fmt.Sprintf("expectations: non-positive TTL %v", ttl), func() {
			NewControllerExpectations(WithTTL(ttl))
		})
	}
	assert.NotPanics(t, func() { NewControllerExpectations(WithTTL(time.Nanosecond)) })
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
