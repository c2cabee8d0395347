package expectations

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPendingReports(t *testing.T) {
	c, clk, _ := newTestCache(t, time.Minute)
	require.NoError(t, c.SetExpectations("b", 2, 1))
	clk.Step(10 * time.Second)
	require.NoError(t, c.ExpectCreationsNamed("a", []string{"p2", "p1", "p3"}))
	c.CreationObservedNamed("a", "p2")
	require.NoError(t, c.ExpectCreations("done", 1))
	c.CreationObserved("done")
	clk.Step(5 * time.Second)

	got := c.PendingAll()
	want := []PendingReport{
		{Key: "a", Adds: 2, PendingNames: []string{"p1", "p3"}, Since: upstreamTestTime.Add(10 * time.Second), Age: 5 * time.Second},
		{Key: "b", Adds: 2, Dels: 1, Since: upstreamTestTime, Age: 15 * time.Second},
	}
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i].Key, got[i].Key)
		assert.Equal(t, want[i].Adds, got[i].Adds)
		assert.Equal(t, want[i].Dels, got[i].Dels)
		assert.Equal(t, want[i].PendingNames, got[i].PendingNames)
		assert.Equal(t, want[i].Age, got[i].Age)
		assert.True(t, want[i].Since.Equal(got[i].Since), "since %v != %v", want[i].Since, got[i].Since)
		assert.False(t, got[i].Fulfilled)
	}

	r, ok := c.Pending("done")
	require.True(t, ok, "a fulfilled live record is still reported by Pending")
	assert.True(t, r.Fulfilled)

	_, ok = c.Pending("missing")
	assert.False(t, ok)

	clk.Step(46 * time.Second) // "b" is now 61 s old, "a" 51 s
	got = c.PendingAll()
	require.Len(t, got, 1)
	assert.Equal(t, "a", got[0].Key)
	_, ok = c.Pending("b")
	assert.False(t, ok, "an expired record is not pending")
}
