package podranking

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// upstreamBucket is the computation upstream performs for one age.
func upstreamBucket(d time.Duration) int16 {
	if d <= 0 {
		return -1
	}
	return int16(int64(math.Log2(float64(d))))
}

// TestLogBucketMatchesLog2 holds logBucket's exponent shortcut to math.Log2
// around every power of two (where rounding can cross an integer) and on
// random ages.
func TestLogBucketMatchesLog2(t *testing.T) {
	tests := []struct {
		name string
		ds   func() []time.Duration
	}{
		{"near powers of two", func() []time.Duration {
			var ds []time.Duration
			for e := 0; e < 63; e++ {
				p := int64(1) << e
				for _, delta := range []int64{-1 << 12, -1025, -1, 0, 1, 1025, 1 << 12} {
					if v := p + delta; v > 0 {
						ds = append(ds, time.Duration(v))
					}
				}
				// Just inside and outside the shortcut's edges.
				for _, m := range []uint64{1<<32 - 1, 1 << 32, 1<<52 - 1<<32 - 1, 1<<52 - 1<<32} {
					f := math.Float64frombits(uint64(1023+e)<<52 | m)
					if f < math.MaxInt64 {
						ds = append(ds, time.Duration(f))
					}
				}
			}
			return append(ds, math.MaxInt64, math.MinInt64, 0, -1)
		}},
		{"random", func() []time.Duration {
			r := newRand(7)
			ds := make([]time.Duration, 100_000)
			for i := range ds {
				ds[i] = time.Duration(r.Int64() >> r.IntN(63))
			}
			return ds
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := tt.ds()
			require.NotEmpty(t, ds)
			for _, d := range ds {
				if upstreamBucket(d) != logBucket(d) {
					assert.Equal(t, upstreamBucket(d), logBucket(d), "d=%d", int64(d))
				}
			}
		})
	}
}

// TestAgeOfMatchesSub holds ageOf's direct subtraction to time.Time.Sub,
// including ages far enough apart to take (and saturate on) the slow path.
func TestAgeOfMatchesSub(t *testing.T) {
	now := time.Date(2026, 11, 22, 20, 0, 0, 123456789, time.UTC)
	pol := newPolicy(now, false, false)
	tests := []struct {
		name string
		t    time.Time
	}{
		{"second ago", now.Add(-time.Second)},
		{"future", now.Add(time.Hour)},
		{"same instant", now},
		{"a month ago", now.Add(-30 * 24 * time.Hour)},
		{"year one", time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)},
		{"far future", time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"edge of the fast path", now.Add(-time.Duration(maxFastAgeSec-1) * time.Second)},
		{"monotonic reading", time.Now()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, now.Sub(tt.t), pol.ageOf(tt.t, tt.t.Unix(), int64(tt.t.Nanosecond())))
		})
	}
}

// FuzzLogBucket compares logBucket with upstream's math.Log2 computation.
func FuzzLogBucket(f *testing.F) {
	for _, v := range []int64{0, 1, 2, 3, 1<<53 - 1, 1<<54 - 1, 1 << 40, math.MaxInt64, -5} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v int64) {
		assert.Equal(t, upstreamBucket(time.Duration(v)), logBucket(time.Duration(v)))
	})
}
