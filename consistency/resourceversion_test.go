package consistency

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newerDecimal is the reference the comparison is checked against: both
// versions are plain decimals without a leading zero, and wrote is the larger
// number.
func newerDecimal(wrote, read string) bool {
	w, okW := decimal(wrote)
	r, okR := decimal(read)
	return okW && okR && w.Cmp(r) > 0
}

func decimal(s string) (*big.Int, bool) {
	if s == "" || s[0] == '0' {
		return nil, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return nil, false
		}
	}
	n, ok := new(big.Int).SetString(s, 10)
	return n, ok
}

func TestCompareResourceVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1", "1", 0},
		{"9", "10", -1},
		{"10", "9", 1},
		{"123", "124", -1},
		{"18446744073709551616", "18446744073709551615", 1},
		{"99999999999999999999999", "100000000000000000000000", -1},
	} {
		got, err := CompareResourceVersions(tc.a, tc.b)
		require.NoError(t, err, "%s vs %s", tc.a, tc.b)
		assert.Equal(t, tc.want, got, "%s vs %s", tc.a, tc.b)
	}
	for _, bad := range [][2]string{{"", "1"}, {"1", ""}, {"0", "1"}, {"01", "2"}, {"1", "-1"}, {"1a", "1"}, {" 1", "1"}, {"1", "+1"}} {
		_, err := CompareResourceVersions(bad[0], bad[1])
		assert.ErrorIs(t, err, ErrMalformedResourceVersion, "%q vs %q", bad[0], bad[1])
	}
}

// FuzzCompareResourceVersions checks the digit-string comparison against
// arbitrary-precision arithmetic.
func FuzzCompareResourceVersions(f *testing.F) {
	for _, seed := range [][2]string{{"10", "9"}, {"1", "1"}, {"007", "7"}, {"", "3"}, {"18446744073709551616", "1"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		got, err := CompareResourceVersions(a, b)
		x, okA := decimal(a)
		y, okB := decimal(b)
		if !okA || !okB {
			require.ErrorIs(t, err, ErrMalformedResourceVersion)
			return
		}
		require.NoError(t, err)
		require.Equal(t, x.Cmp(y), got)
	})
}

func BenchmarkCompareResourceVersions(b *testing.B) {
	for b.Loop() {
		_, _ = CompareResourceVersions("18446744073709551615", "18446744073709551616")
	}
}
