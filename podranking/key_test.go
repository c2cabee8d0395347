package podranking

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// log2Floor must be upstream's int64(math.Log2(float64(d))) for every
// positive duration. The answers that could differ lie next to the powers
// of two, so every power is probed from both sides, at the edges of the
// margin and in between, besides random durations.
func TestLog2FloorMatchesMathLog2(t *testing.T) {
	want := func(d time.Duration) int16 { return int16(math.Log2(float64(d))) }
	check := func(d time.Duration) {
		if d > 0 {
			if got := log2Floor(d); got != want(d) {
				t.Fatalf("log2Floor(%d) = %d, math.Log2 says %d", d, got, want(d))
			}
		}
	}
	for b := range 63 {
		p, margin := uint64(1)<<b, uint64(1)<<max(b-20, 0)
		for _, base := range []uint64{p, p + margin, p - margin, 2*p - margin, 2*p + margin} {
			for off := uint64(0); off <= 2000; off++ {
				if d := base + off - 1000; d <= math.MaxInt64 { // wraps below zero to huge
					check(time.Duration(d))
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1_000_000 {
		check(time.Duration(r.Int64N(math.MaxInt64)>>r.IntN(63) + 1))
	}
}

func TestUIDPrefixOrdersAsStrings(t *testing.T) {
	uids := []types.UID{"", "a", "a\x00", "ab", "abcdefgh", "abcdefgh0", "abcdefgi", "b", "\xff", "5f0e4c1a-7b6e-4c8e-9d0a-0123456789ab"}
	for _, a := range uids {
		for _, b := range uids {
			ka := key{pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: a}}, uidPrefix: uidPrefix(a)}
			kb := key{pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: b}}, uidPrefix: uidPrefix(b)}
			want := 0
			switch {
			case a < b:
				want = -1
			case a > b:
				want = 1
			}
			assert.Equal(t, want, compareUIDs(&ka, &kb), "%q vs %q", a, b)
		}
	}
}

// TestBucketOfMatchesSub: the age computed from wall clocks gives the
// bucket of now.Sub(t), near now, far in the past and future (where Sub
// saturates), and with a monotonic reading on now.
func TestBucketOfMatchesSub(t *testing.T) {
	r := newRand(3)
	for _, now := range []time.Time{testNow, time.Now(), time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC)} {
		pol := newPolicy(now, false, false, false)
		for range 20000 {
			var tm time.Time
			switch r.IntN(4) {
			case 0:
				tm = now.Round(0).Add(-time.Duration(r.Int64N(1 << 62)))
			case 1:
				tm = now.Round(0).Add(time.Duration(r.Int64N(1 << 40)))
			case 2:
				tm = time.Unix(r.Int64N(1<<40)-1<<39, r.Int64N(1e9))
			default:
				tm = now.Round(0).Add(-time.Duration(r.Int64N(int64(time.Hour))))
			}
			got := pol.bucketOf(tm, instantOf(tm), false)
			if want := pol.bucket(tm); got != want {
				t.Fatalf("now %v, t %v: bucketOf %d, bucket %d", now, tm, got, want)
			}
		}
	}
}
