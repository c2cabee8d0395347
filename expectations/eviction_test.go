package expectations

import (
	"testing"
	"time"

	"github.com/go-logr/logr"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const manyKeys = 100_000

// TestEvictionLeavesNoRecords pins that memory follows live owners: 100,000
// owners that expired or were deleted leave no record behind, whichever path
// evicts them.
func TestEvictionLeavesNoRecords(t *testing.T) {
	keys := make([]string, manyKeys)
	for i := range keys {
		keys[i] = keyN(i)
	}
	// The two cases the issue names run at full size; the other eviction
	// paths are the same code and run smaller to keep -race time down.
	tests := []struct {
		name  string
		n     int
		evict func(t *testing.T, c *ControllerExpectations, keys []string)
	}{
		{name: "expired, then read", n: manyKeys, evict: func(t *testing.T, c *ControllerExpectations, keys []string) {
			for _, k := range keys {
				if !c.SatisfiedExpectations(k) {
					t.Fatalf("expired key %s not satisfied", k)
				}
			}
		}},
		{name: "expired, then EvictExpired", n: manyKeys / 10, evict: func(t *testing.T, c *ControllerExpectations, keys []string) {
			assert.Equal(t, len(keys), c.EvictExpired())
		}},
		{name: "expired, then swept by writes for other owners", n: manyKeys / 10, evict: func(t *testing.T, c *ControllerExpectations, keys []string) {
			// Other owners keep being set and deleted; their writes drive
			// the sweep until the expired records are gone.
			const k = "other/owner"
			for i := 0; i < 5*len(keys); i++ {
				_ = c.ExpectCreations(k, 1)
				c.DeleteExpectations(k)
				if i%1000 == 0 && c.Len() == 0 {
					break
				}
			}
		}},
		{name: "deleted", n: manyKeys, evict: func(t *testing.T, c *ControllerExpectations, keys []string) {
			for _, k := range keys {
				c.DeleteExpectations(k)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(upstreamTestTime)
			logs := &countingSink{}
			c := NewControllerExpectations(WithClock(clk), WithTTL(time.Minute), WithLogger(logr.New(logs)))
			keys := keys[:tt.n]
			for _, k := range keys {
				if err := c.ExpectCreations(k, 1); err != nil {
					t.Fatal(err)
				}
			}
			require.Equal(t, tt.n, c.Len())
			clk.Step(time.Minute + time.Second)
			tt.evict(t, c, keys)
			assert.Zero(t, c.Len())
			assert.Empty(t, c.PendingAll())
			if tt.name != "deleted" {
				assert.Equal(t, tt.n, logs.count("expired before they were fulfilled"),
					"each unfulfilled expiry is logged exactly once")
			}
		})
	}
}

func TestSweepSparesLiveRecords(t *testing.T) {
	c, clk, _ := newTestCache(t, time.Minute)
	for i := range 1000 {
		require.NoError(t, c.ExpectCreations(keyN(i), 1))
	}
	clk.Step(30 * time.Second)
	for i := 1000; i < 2000; i++ {
		require.NoError(t, c.ExpectCreations(keyN(i), 1))
	}
	clk.Step(31 * time.Second) // first batch expired, second still live
	for range 10_000 {
		require.NoError(t, c.ExpectCreations("other", 1))
	}
	assert.Equal(t, 1001, c.Len(), "only the expired batch is swept")
	for i := 1000; i < 2000; i++ {
		assert.False(t, c.SatisfiedExpectations(keyN(i)))
	}
}

func TestExpiryLoggedOnce(t *testing.T) {
	tests := []struct {
		name     string
		observe  bool
		access   func(c *ControllerExpectations)
		wantLogs int
	}{
		{name: "satisfied twice", access: func(c *ControllerExpectations) {
			c.SatisfiedExpectations("k")
			c.SatisfiedExpectations("k")
		}, wantLogs: 1},
		{name: "get then evict all", access: func(c *ControllerExpectations) {
			_, _, _ = c.GetExpectations("k")
			c.EvictExpired()
		}, wantLogs: 1},
		{name: "re-set of the expired record", access: func(c *ControllerExpectations) {
			_ = c.ExpectCreations("k", 1)
			c.SatisfiedExpectations("k")
		}, wantLogs: 1},
		{name: "pending", access: func(c *ControllerExpectations) {
			c.Pending("k")
			c.Pending("k")
		}, wantLogs: 1},
		{name: "fulfilled record expires silently", observe: true, access: func(c *ControllerExpectations) {
			c.SatisfiedExpectations("k")
			c.EvictExpired()
		}, wantLogs: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, clk, logs := newTestCache(t, time.Minute)
			require.NoError(t, c.ExpectCreationsNamed("k", []string{"pod-a", "pod-b"}))
			c.CreationObservedNamed("k", "pod-a")
			if tt.observe {
				c.CreationObservedNamed("k", "pod-b")
			}
			clk.Step(2 * time.Minute)
			tt.access(c)
			lines := logs.matching("expired before they were fulfilled")
			require.Len(t, lines, tt.wantLogs)
			if tt.wantLogs > 0 {
				assert.Contains(t, lines[0], `"key"="k"`)
				assert.Contains(t, lines[0], `"add"=1`)
				assert.Contains(t, lines[0], `"pendingNames"=["pod-b"]`)
				assert.Contains(t, lines[0], `"age"="2m0s"`)
			}
		})
	}
}
