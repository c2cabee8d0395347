package expectations

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Switching a key between ExpectCreations and ExpectCreationsNamed always
// leaves the mode last asked for.
func TestSetSwitchesBetweenNamedAndCounted(t *testing.T) {
	tests := []struct {
		name       string
		set        func(c *ControllerExpectations)
		observe    string
		wantAdd    int64
		wantNames  []string
		wantSatisf bool
	}{
		{
			name: "named then counted forgets the names",
			set: func(c *ControllerExpectations) {
				require.NoError(t, c.ExpectCreationsNamed("k", []string{"p1", "p2"}))
				require.NoError(t, c.ExpectCreations("k", 1))
			},
			observe: "unexpected", wantAdd: 0, wantSatisf: true,
		},
		{
			name: "counted then named tracks the names",
			set: func(c *ControllerExpectations) {
				require.NoError(t, c.ExpectCreations("k", 1))
				require.NoError(t, c.ExpectCreations("k", 5))
				require.NoError(t, c.ExpectCreationsNamed("k", []string{"p1"}))
			},
			observe: "unexpected", wantAdd: 1, wantNames: []string{"p1"}, wantSatisf: false,
		},
		{
			name: "named re-set twice keeps the second set",
			set: func(c *ControllerExpectations) {
				require.NoError(t, c.ExpectCreationsNamed("k", []string{"p1"}))
				require.NoError(t, c.ExpectCreationsNamed("k", []string{"p2", "p3"}))
			},
			observe: "p1", wantAdd: 2, wantNames: []string{"p2", "p3"}, wantSatisf: false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := newTestCache(t, time.Minute)
			tc.set(c)
			c.CreationObservedNamed("k", tc.observe)
			r, ok := c.Pending("k")
			require.True(t, ok)
			assert.Equal(t, tc.wantAdd, r.Adds)
			assert.Equal(t, tc.wantNames, r.PendingNames)
			assert.Equal(t, tc.wantSatisf, c.SatisfiedExpectations("k"))
		})
	}
}

// A re-Set of an expired, unfulfilled record reports the expiry once and
// revives the key.
func TestSetOfExpiredRecordLogsOnce(t *testing.T) {
	c, clk, logs := newTestCache(t, time.Minute)
	require.NoError(t, c.ExpectCreations("k", 1))
	clk.Step(time.Minute + time.Nanosecond)
	require.NoError(t, c.ExpectCreations("k", 1))
	assert.False(t, c.SatisfiedExpectations("k"), "the re-Set record is live again")
	c.EvictExpired()
	assert.Len(t, logs.matching("expired before"), 1)
}
