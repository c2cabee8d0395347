package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sampleOutput = `goos: linux
goarch: amd64
pkg: github.com/ctrlkit/ctrlkit/e2e/parity
cpu: AMD EPYC
BenchmarkRanking/PodsToDelete/N=1000/diff=5%/impl=ctrlkit-2         	   10000	    100.0 ns/op	      64 B/op	       2 allocs/op
BenchmarkRanking/PodsToDelete/N=1000/diff=5%/impl=upstream-2        	     100	   3000 ns/op	    6400 B/op	     200 allocs/op
BenchmarkRanking/PodsToDelete/N=1000/diff=5%/impl=ctrlkit-2         	   10000	    300.0 ns/op	      64 B/op	       2 allocs/op
BenchmarkRanking/PodsToDelete/N=1000/diff=5%/impl=upstream-2        	     100	   1000 ns/op	    6400 B/op	     200 allocs/op
BenchmarkRanking/PodsToDelete/N=1000/diff=5%/impl=ctrlkit-2         	   10000	    200.0 ns/op	      64 B/op	       2 allocs/op
BenchmarkRanking/PodsToDelete/N=1000/diff=5%/impl=upstream-2        	     100	   2000 ns/op	    6400 B/op	     200 allocs/op
BenchmarkLonely-2   	 1000	  5 ns/op
PASS
ok  	github.com/ctrlkit/ctrlkit/e2e/parity	3.0s
pkg: github.com/ctrlkit/ctrlkit/workqueue
BenchmarkQueue/impl=ctrlkit/AddGet-2   	 1000	  50 ns/op	  0 B/op	  0 allocs/op
BenchmarkQueue/impl=clientgo/AddGet-2  	 1000	  150 ns/op	  16 B/op	  1 allocs/op
BenchmarkOnlyUpstream/impl=upstream-2  	 1000	  150 ns/op
`

func TestParse(t *testing.T) {
	all, _, err := parse(strings.NewReader(sampleOutput))
	require.NoError(t, err)
	require.Len(t, all, 6)
	assert.Equal(t, "BenchmarkRanking/PodsToDelete/N=1000/diff=5%/impl=ctrlkit", all[0].name)
	assert.Equal(t, "BenchmarkRanking/PodsToDelete/N=1000/diff=5%/impl=*", all[0].group)
	assert.Equal(t, "ctrlkit", all[0].impl)
	assert.Len(t, all[0].samples, 3)
	assert.Equal(t, "github.com/ctrlkit/ctrlkit/e2e/parity", all[0].pkg)
	assert.Equal(t, "github.com/ctrlkit/ctrlkit/workqueue", all[3].pkg)
	assert.Equal(t, "BenchmarkQueue/impl=*/AddGet", all[3].group)
	assert.False(t, all[2].samples[0].hasMem, "a line without -benchmem columns has no memory figures")
}

func TestParseResult(t *testing.T) {
	tests := []struct {
		name   string
		line   string
		ok     bool
		bench  string
		ns     float64
		allocs float64
	}{
		{"full", "BenchmarkX/a=1-8  100  12.5 ns/op  3 B/op  1 allocs/op", true, "BenchmarkX/a=1", 12.5, 1},
		{"no procs suffix", "BenchmarkX 100 7 ns/op", true, "BenchmarkX", 7, 0},
		{"custom metric kept apart", "BenchmarkX-2 100 7 ns/op 3.5 pods/op", true, "BenchmarkX", 7, 0},
		{"name ending in dash word", "BenchmarkX/impl=go-routine 100 7 ns/op", true, "BenchmarkX/impl=go-routine", 7, 0},
		{"header", "goos: linux", false, "", 0, 0},
		{"benchmark log line", "BenchmarkX-2 some log text here", false, "", 0, 0},
		{"no ns/op", "BenchmarkX-2 100 3 B/op 1 allocs/op", false, "", 0, 0},
		{"garbage value", "BenchmarkX-2 100 abc ns/op", false, "", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name, s, ok := parseResult(tc.line)
			require.Equal(t, tc.ok, ok)
			if !ok {
				return
			}
			assert.Equal(t, tc.bench, name)
			assert.Equal(t, tc.ns, s.nsPerOp)
			assert.Equal(t, tc.allocs, s.allocsPerOp)
		})
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{4}, 4},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{100, 1, 1, 1, 1000}, 1},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, median(tc.in), "%v", tc.in)
	}
	in := []float64{3, 1, 2}
	median(in)
	assert.Equal(t, []float64{3, 1, 2}, in, "median must not reorder its input")
}

func TestPair(t *testing.T) {
	all, _, err := parse(strings.NewReader(sampleOutput))
	require.NoError(t, err)
	rows, unpaired := pair(all)
	require.Len(t, rows, 2)

	r := rows[0]
	assert.Equal(t, "upstream", r.ref)
	assert.Equal(t, 200.0, r.ck.ns, "median of 100, 300, 200")
	assert.Equal(t, 2000.0, r.other.ns)
	assert.Equal(t, 3, r.ck.runs)
	assert.Equal(t, 2.0, r.ck.allocs)
	assert.Equal(t, 200.0, r.other.allocs)

	assert.Equal(t, "clientgo", rows[1].ref)
	assert.Equal(t, "BenchmarkQueue/impl=*/AddGet", rows[1].bench)

	var names []string
	for _, s := range unpaired {
		names = append(names, s.name)
	}
	assert.ElementsMatch(t, []string{"BenchmarkLonely", "BenchmarkOnlyUpstream/impl=upstream"}, names)
}

func TestPairSeveralReferences(t *testing.T) {
	in := `BenchmarkB/impl=ctrlkit 1 10 ns/op
BenchmarkB/impl=upstream 1 20 ns/op
BenchmarkB/impl=baseline 1 40 ns/op
`
	all, _, err := parse(strings.NewReader(in))
	require.NoError(t, err)
	rows, unpaired := pair(all)
	require.Len(t, rows, 2)
	assert.Empty(t, unpaired)
	assert.Equal(t, "upstream", rows[0].ref)
	assert.Equal(t, "baseline", rows[1].ref)
}

func TestPairKeepsPackagesApart(t *testing.T) {
	in := `pkg: a
BenchmarkB/impl=ctrlkit 1 10 ns/op
pkg: b
BenchmarkB/impl=upstream 1 20 ns/op
`
	all, _, err := parse(strings.NewReader(in))
	require.NoError(t, err)
	rows, unpaired := pair(all)
	assert.Empty(t, rows, "same name in two packages is not a pair")
	assert.Len(t, unpaired, 2)
}

func TestRatio(t *testing.T) {
	assert.Equal(t, "10.00×", ratio(2000, 200))
	assert.Equal(t, "0.50×", ratio(1, 2))
	assert.Equal(t, "=", ratio(0, 0))
	assert.Equal(t, "∞", ratio(4, 0))
}

func TestRun(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(strings.NewReader(sampleOutput), &out, &errOut, nil)
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	require.Len(t, lines, 4, out.String())
	assert.Contains(t, lines[0], "speed-up")
	assert.Contains(t, lines[2], "parity.BenchmarkRanking/PodsToDelete/N=1000/diff=5%/impl=*")
	assert.Contains(t, lines[2], "10.00×")
	assert.Contains(t, lines[2], "100.00×", "allocs ratio 200/2")
	assert.Contains(t, lines[3], "3.00×")
	assert.Contains(t, errOut.String(), "2 benchmark(s)")

	// every row has the same width, so the table stays aligned
	for _, l := range lines[1:] {
		assert.Equal(t, len([]rune(lines[0])), len([]rune(l)))
	}
}

func TestRunStrictWithoutPairs(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, run(strings.NewReader("BenchmarkX 1 2 ns/op\n"), &out, &errOut, []string{"-strict"}))
	assert.Equal(t, 0, run(strings.NewReader("BenchmarkX 1 2 ns/op\n"), &out, &errOut, nil))
	assert.Equal(t, 2, run(strings.NewReader(""), &out, &errOut, []string{"-bogus"}))
}

func TestTrimProcs(t *testing.T) {
	assert.Equal(t, "BenchmarkX", trimProcs("BenchmarkX-16"))
	assert.Equal(t, "BenchmarkX-", trimProcs("BenchmarkX-"))
	assert.Equal(t, "BenchmarkX/impl=go-routine", trimProcs("BenchmarkX/impl=go-routine"))
	assert.Equal(t, "BenchmarkX", trimProcs("BenchmarkX"))
}

func TestFailuresFailTheRun(t *testing.T) {
	in := sampleOutput + "--- FAIL: BenchmarkX\nFAIL\tgithub.com/x\t1.0s\n"
	_, failures, err := parse(strings.NewReader(in))
	require.NoError(t, err)
	assert.Len(t, failures, 2)
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, run(strings.NewReader(in), &out, &errOut, nil))
	assert.Contains(t, out.String(), "10.00×", "the table is still printed")
	assert.Contains(t, errOut.String(), "--- FAIL: BenchmarkX")
}

func TestExtraMetrics(t *testing.T) {
	in := `BenchmarkScaleUp/pods=1000/impl=ctrlkit-2 1 4000000000 ns/op 1000 creates/op 1010 writes/op
BenchmarkScaleUp/pods=1000/impl=ctrlkit-2 1 5000000000 ns/op 1000 creates/op 1030 writes/op
BenchmarkScaleUp/pods=1000/impl=upstream-2 1 4500000000 ns/op 1000 creates/op 1020 writes/op 3 retries/op
`
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run(strings.NewReader(in), &out, &errOut, nil))
	assert.Contains(t, out.String(), "other metrics (ctrlkit / other)")
	assert.Contains(t, out.String(), "creates/op 1000 / 1000; retries/op - / 3.00; writes/op 1020 / 1020")
	assert.Contains(t, out.String(), "1.00×", "median 4.5e9 both sides")

	_, s, ok := parseResult("BenchmarkX-2 10 5 ns/op 100 MB/s 7 ns/call")
	require.True(t, ok)
	assert.Equal(t, map[string]float64{"ns/call": 7}, s.extra, "MB/s is dropped, custom units kept")
}
