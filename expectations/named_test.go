package expectations

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreationTrackingByName(t *testing.T) {
	tests := []struct {
		name        string
		expect      []string
		plain       int // when expect is nil and plain > 0: a count-only record
		observed    []string
		wantAdd     int64
		wantPending []string
		wantSatisfy bool
	}{
		{name: "all expected names observed", expect: []string{"a", "b"}, observed: []string{"a", "b"}, wantSatisfy: true},
		{name: "duplicates in the expectation collapse", expect: []string{"a", "a", "b"}, observed: []string{"a", "b"}, wantSatisfy: true},
		{name: "unexpected name does not lower", expect: []string{"a", "b"}, observed: []string{"a", "zzz"}, wantAdd: 1, wantPending: []string{"b"}},
		{name: "a name observed twice lowers once", expect: []string{"a", "b"}, observed: []string{"a", "a"}, wantAdd: 1, wantPending: []string{"b"}},
		{name: "nil names are fulfilled at once", expect: []string{}, wantSatisfy: true},
		{name: "empty name is an ordinary name", expect: []string{""}, observed: []string{""}, wantSatisfy: true},
		{name: "count-only record falls back to counting", plain: 2, observed: []string{"x", "x"}, wantSatisfy: true},
		{name: "count-only record partly observed", plain: 2, observed: []string{"x"}, wantAdd: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, _ := newTestCache(t, 0)
			if tt.plain > 0 {
				require.NoError(t, c.ExpectCreations("k", tt.plain))
			} else {
				require.NoError(t, c.ExpectCreationsNamed("k", tt.expect))
			}
			for _, n := range tt.observed {
				c.CreationObservedNamed("k", n)
			}
			assert.Equal(t, tt.wantSatisfy, c.SatisfiedExpectations("k"))
			r, ok := c.Pending("k")
			require.True(t, ok)
			assert.Equal(t, tt.wantAdd, r.Adds)
			assert.Equal(t, tt.wantPending, r.PendingNames)
		})
	}
}

func TestNamedNilSliceAndUnknownKey(t *testing.T) {
	c, _, _ := newTestCache(t, 0)
	require.NoError(t, c.ExpectCreationsNamed("k", nil))
	assert.True(t, c.SatisfiedExpectations("k"))
	c.CreationObservedNamed("unknown", "a")
	_, ok := c.Pending("unknown")
	assert.False(t, ok, "an observation never creates a record")
}

func TestNamedRecordResetByPlainSet(t *testing.T) {
	c, _, _ := newTestCache(t, 0)
	require.NoError(t, c.ExpectCreationsNamed("k", []string{"a", "b"}))
	require.NoError(t, c.ExpectCreations("k", 1))
	r, _ := c.Pending("k")
	assert.Nil(t, r.PendingNames, "a plain Set forgets the names")
	c.CreationObservedNamed("k", "anything")
	assert.True(t, c.SatisfiedExpectations("k"))
}
