package expectations

import (
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestNilCache(t *testing.T) {
	var c *ControllerExpectations
	assert.NotPanics(t, func() {
		rec, ok, err := c.GetExpectations("k")
		assert.Nil(t, rec)
		assert.False(t, ok)
		assert.ErrorIs(t, err, ErrNilExpectations)
		assert.True(t, c.SatisfiedExpectations("k"))
		assert.ErrorIs(t, c.SetExpectations("k", 1, 1), ErrNilExpectations)
		assert.ErrorIs(t, c.ExpectCreations("k", 1), ErrNilExpectations)
		assert.ErrorIs(t, c.ExpectDeletions("k", 1), ErrNilExpectations)
		assert.ErrorIs(t, c.ExpectCreationsNamed("k", []string{"a"}), ErrNilExpectations)
		c.CreationObserved("k")
		c.CreationObservedNamed("k", "a")
		c.DeletionObserved("k")
		c.RaiseExpectations("k", 1, 1)
		c.LowerExpectations("k", 1, 1)
		c.DeleteExpectations("k")
		assert.Zero(t, c.Len())
		assert.Zero(t, c.EvictExpired())
		_, ok = c.Pending("k")
		assert.False(t, ok)
		assert.Nil(t, c.PendingAll())
		assert.Equal(t, "ControllerExpectations(nil)", c.String())
	})
}

func TestZeroValueCache(t *testing.T) {
	var c ControllerExpectations
	require.NoError(t, c.ExpectCreations("k", 1))
	assert.False(t, c.SatisfiedExpectations("k"))
	c.CreationObserved("k")
	assert.True(t, c.SatisfiedExpectations("k"))
	rec, ok, err := c.GetExpectations("k")
	require.NoError(t, err)
	require.True(t, ok)
	assert.WithinDuration(t, time.Now(), rec.Timestamp(), time.Minute)
	assert.Contains(t, c.String(), "records: 1")
}

func TestOptionsIgnoreInvalidValues(t *testing.T) {
	clk := clocktesting.NewFakeClock(upstreamTestTime)
	c := NewControllerExpectations(nil, WithClock(clk), WithClock(nil), WithTTL(0), WithTTL(-time.Second), WithLogger(logr.Logger{}))
	require.NoError(t, c.ExpectCreations("k", 1))
	clk.Step(ExpectationsTimeout)
	assert.False(t, c.SatisfiedExpectations("k"), "the default TTL still applies")
	clk.Step(time.Nanosecond)
	assert.NotPanics(t, func() { assert.True(t, c.SatisfiedExpectations("k")) }, "a nil-sink logger discards")
}

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

func TestNilAndZeroUIDTracking(t *testing.T) {
	for name, u := range map[string]*UIDTrackingControllerExpectations{
		"nil":        nil,
		"zero value": {},
	} {
		t.Run(name, func(t *testing.T) {
			assert.NotPanics(t, func() {
				assert.ErrorIs(t, u.ExpectDeletions("k", []string{"a"}), ErrNilExpectations)
				u.DeletionObserved("k", "a")
				assert.Nil(t, u.GetUIDs("k"))
				assert.Nil(t, u.PendingDeletions("k"))
				u.DeleteExpectations("k")
				assert.Zero(t, u.Len())
				_, _, err := u.GetExpectations("k")
				assert.ErrorIs(t, err, ErrNilExpectations)
				assert.True(t, u.SatisfiedExpectations("k"))
				assert.ErrorIs(t, u.SetExpectations("k", 1, 1), ErrNilExpectations)
				assert.ErrorIs(t, u.ExpectCreations("k", 1), ErrNilExpectations)
				u.CreationObserved("k")
				u.RaiseExpectations("k", 1, 1)
				u.LowerExpectations("k", 1, 1)
			})
		})
	}
}

func TestUIDTrackingWrapsNil(t *testing.T) {
	var typedNil *ControllerExpectations
	for name, inner := range map[string]ControllerExpectationsInterface{"nil interface": nil, "typed nil": typedNil} {
		t.Run(name, func(t *testing.T) {
			u := NewUIDTrackingControllerExpectations(inner)
			require.NoError(t, u.ExpectDeletions("k", []string{"a"}))
			assert.False(t, u.SatisfiedExpectations("k"))
			u.DeletionObserved("k", "a")
			assert.True(t, u.SatisfiedExpectations("k"))
		})
	}
}
