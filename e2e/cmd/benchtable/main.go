// Command benchtable turns `go test -bench` output into a side-by-side table.
//
// It reads benchmark output on stdin (any number of -count runs, from any
// number of packages), pairs sub-benchmarks whose names differ only in their
// `impl=...` segment, and prints, for every pair, the medians of ns/op, B/op
// and allocs/op of both sides and the ratio other/ctrlkit. A ratio above 1
// means ctrlkit is faster (or smaller).
//
//	go test -run '^$' -bench . -benchmem -count 5 ./... | go run ./cmd/benchtable
//
// Other metrics a benchmark reports with b.ReportMetric (creates/op,
// ns/call, ...) are listed beside the table as medians per side. The exit
// status is 1 when the input contains a failure line (`--- FAIL`, `FAIL`,
// `panic:`), so `go test -bench ... | benchtable` still fails a broken run.
//
// The ctrlkit side is the segment `impl=ctrlkit`; every other impl value
// (upstream, clientgo, goroutinepercall, baseline, ...) is a reference it is
// compared against. Medians rather than means keep one noisy run on a shared
// machine from moving the figure.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// candidateImpl is the impl value every other implementation is compared to.
const candidateImpl = "ctrlkit"

// sample is one result line of one benchmark run.
type sample struct {
	nsPerOp     float64
	bytesPerOp  float64
	allocsPerOp float64
	hasMem      bool
	extra       map[string]float64 // b.ReportMetric units
}

// series gathers the runs of one benchmark (one package, one full name).
type series struct {
	pkg     string
	name    string // without the -GOMAXPROCS suffix
	group   string // name with the impl segment replaced by "impl=*"
	impl    string
	samples []sample
}

// parse reads go test output and returns the series in first-seen order,
// and the lines that report a failure (`--- FAIL`, `FAIL`, `panic:`), so that
// a pipeline through benchtable does not hide a failed benchmark run. Other
// lines are ignored, except `pkg:` lines, which set the package of the
// results that follow.
func parse(r io.Reader) ([]*series, []string, error) {
	var (
		order    []*series
		byKey    = map[string]*series{}
		pkg      string
		failures []string
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "pkg:"); ok {
			pkg = strings.TrimSpace(rest)
			continue
		}
		if strings.HasPrefix(line, "--- FAIL") || strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "panic:") {
			failures = append(failures, line)
			continue
		}
		name, smp, ok := parseResult(line)
		if !ok {
			continue
		}
		key := pkg + "\x00" + name
		s := byKey[key]
		if s == nil {
			group, impl := splitImpl(name)
			s = &series{pkg: pkg, name: name, group: group, impl: impl}
			byKey[key] = s
			order = append(order, s)
		}
		s.samples = append(s.samples, smp)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading benchmark output: %w", err)
	}
	return order, failures, nil
}

// parseResult parses one `BenchmarkX-8  N  v ns/op  v B/op  v allocs/op` line.
func parseResult(line string) (string, sample, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
		return "", sample{}, false
	}
	if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
		return "", sample{}, false
	}
	var s sample
	gotNs := false
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return "", sample{}, false
		}
		switch f[i+1] {
		case "ns/op":
			s.nsPerOp, gotNs = v, true
		case "B/op":
			s.bytesPerOp, s.hasMem = v, true
		case "allocs/op":
			s.allocsPerOp, s.hasMem = v, true
		case "MB/s":
			// throughput is ns/op seen from the other side; skip it
		default:
			if s.extra == nil {
				s.extra = map[string]float64{}
			}
			s.extra[f[i+1]] = v
		}
	}
	if !gotNs {
		return "", sample{}, false
	}
	return trimProcs(f[0]), s, true
}

// trimProcs removes the -GOMAXPROCS suffix go test appends to names.
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}

// splitImpl finds the `impl=` segment of a benchmark name. It returns the
// name with that segment replaced by `impl=*`, and the impl value; names
// without such a segment return an empty impl.
func splitImpl(name string) (group, impl string) {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		if v, ok := strings.CutPrefix(p, "impl="); ok {
			parts[i] = "impl=*"
			return strings.Join(parts, "/"), v
		}
	}
	return name, ""
}

// median returns the median of xs (mean of the middle two for even lengths).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// stats are the medians of one series.
type stats struct {
	ns, bytes, allocs float64
	hasMem            bool
	runs              int
	extra             map[string]float64
}

func summarize(s *series) stats {
	var ns, b, a []float64
	extra := map[string][]float64{}
	st := stats{runs: len(s.samples)}
	for _, x := range s.samples {
		ns = append(ns, x.nsPerOp)
		if x.hasMem {
			st.hasMem = true
			b = append(b, x.bytesPerOp)
			a = append(a, x.allocsPerOp)
		}
		for unit, v := range x.extra {
			extra[unit] = append(extra[unit], v)
		}
	}
	st.ns, st.bytes, st.allocs = median(ns), median(b), median(a)
	if len(extra) > 0 {
		st.extra = map[string]float64{}
		for unit, vs := range extra {
			st.extra[unit] = median(vs)
		}
	}
	return st
}

// extraCell renders the custom metrics both sides report, "unit a / b",
// sorted by unit; a unit only one side reports shows "-" for the other.
func extraCell(ck, other stats) string {
	units := map[string]bool{}
	for u := range ck.extra {
		units[u] = true
	}
	for u := range other.extra {
		units[u] = true
	}
	if len(units) == 0 {
		return ""
	}
	var names []string
	for u := range units {
		names = append(names, u)
	}
	sort.Strings(names)
	side := func(s stats, u string) string {
		if v, ok := s.extra[u]; ok {
			return num(v)
		}
		return "-"
	}
	var parts []string
	for _, u := range names {
		parts = append(parts, u+" "+side(ck, u)+" / "+side(other, u))
	}
	return strings.Join(parts, "; ")
}

// row is one ctrlkit-versus-reference pair.
type row struct {
	pkg, bench, ref string
	ck, other       stats
}

// pair matches every ctrlkit series with each reference series of its group.
// It also returns the series that found no partner, for the caller to report.
func pair(all []*series) (rows []row, unpaired []*series) {
	type gkey struct{ pkg, group string }
	groups := map[gkey][]*series{}
	var order []gkey
	for _, s := range all {
		if s.impl == "" {
			unpaired = append(unpaired, s)
			continue
		}
		k := gkey{s.pkg, s.group}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], s)
	}
	for _, k := range order {
		var ck *series
		var refs []*series
		for _, s := range groups[k] {
			if s.impl == candidateImpl {
				ck = s
			} else {
				refs = append(refs, s)
			}
		}
		if ck == nil || len(refs) == 0 {
			unpaired = append(unpaired, groups[k]...)
			continue
		}
		for _, r := range refs {
			rows = append(rows, row{pkg: k.pkg, bench: k.group, ref: r.impl, ck: summarize(ck), other: summarize(r)})
		}
	}
	return rows, unpaired
}

// ratio returns other/ctrlkit, guarding the zero cases so that a ctrlkit
// figure of 0 (for example 0 allocs/op) does not print as +Inf.
func ratio(other, ck float64) string {
	switch {
	case ck == 0 && other == 0:
		return "="
	case ck == 0:
		return "∞"
	default:
		return strconv.FormatFloat(other/ck, 'f', 2, 64) + "×"
	}
}

func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// render writes rows as a Markdown table with aligned columns.
func render(w io.Writer, rows []row, showPkg bool) error {
	header := []string{"benchmark", "vs", "runs", "ctrlkit ns/op", "other ns/op", "speed-up", "ctrlkit B/op", "other B/op", "ctrlkit allocs/op", "other allocs/op", "allocs ratio"}
	withExtra := false
	for _, r := range rows {
		if extraCell(r.ck, r.other) != "" {
			withExtra = true
		}
	}
	if withExtra {
		header = append(header, "other metrics (ctrlkit / other)")
	}
	table := [][]string{header}
	for _, r := range rows {
		name := r.bench
		if showPkg && r.pkg != "" {
			name = shortPkg(r.pkg) + "." + name
		}
		mem := func(s stats, v float64) string {
			if !s.hasMem {
				return "-"
			}
			return num(v)
		}
		allocRatio := "-"
		if r.ck.hasMem && r.other.hasMem {
			allocRatio = ratio(r.other.allocs, r.ck.allocs)
		}
		line := []string{
			name, r.ref, fmt.Sprintf("%d/%d", r.ck.runs, r.other.runs),
			num(r.ck.ns), num(r.other.ns), ratio(r.other.ns, r.ck.ns),
			mem(r.ck, r.ck.bytes), mem(r.other, r.other.bytes),
			mem(r.ck, r.ck.allocs), mem(r.other, r.other.allocs), allocRatio,
		}
		if withExtra {
			line = append(line, extraCell(r.ck, r.other))
		}
		table = append(table, line)
	}
	widths := make([]int, len(header))
	for _, line := range table {
		for i, c := range line {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	bw := bufio.NewWriter(w)
	writeLine := func(cells []string) {
		bw.WriteString("|")
		for i, c := range cells {
			pad := widths[i] - len([]rune(c))
			if i >= 2 && i < 11 { // numbers read better right-aligned
				bw.WriteString(" " + strings.Repeat(" ", pad) + c + " |")
			} else {
				bw.WriteString(" " + c + strings.Repeat(" ", pad) + " |")
			}
		}
		bw.WriteString("\n")
	}
	writeLine(table[0])
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = strings.Repeat("-", widths[i])
	}
	writeLine(sep)
	for _, line := range table[1:] {
		writeLine(line)
	}
	return bw.Flush()
}

// shortPkg keeps the last path element of a package path: the table is for
// people, and the full module path only widens it.
func shortPkg(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

func run(stdin io.Reader, stdout, stderr io.Writer, args []string) int {
	fs := flag.NewFlagSet("benchtable", flag.ContinueOnError)
	fs.SetOutput(stderr)
	showPkg := fs.Bool("pkg", true, "prefix benchmark names with their package")
	strict := fs.Bool("strict", false, "exit 1 when no pair was found")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	all, failures, err := parse(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "benchtable:", err)
		return 1
	}
	rows, unpaired := pair(all)
	if err := render(stdout, rows, *showPkg); err != nil {
		fmt.Fprintln(stderr, "benchtable:", err)
		return 1
	}
	if len(unpaired) > 0 {
		fmt.Fprintf(stderr, "benchtable: %d benchmark(s) without an impl=ctrlkit/impl=<other> partner were left out\n", len(unpaired))
	}
	if len(failures) > 0 {
		fmt.Fprintf(stderr, "benchtable: the benchmark run reported failures:\n  %s\n", strings.Join(failures, "\n  "))
		return 1
	}
	if *strict && len(rows) == 0 {
		fmt.Fprintln(stderr, "benchtable: no ctrlkit/reference pairs found")
		return 1
	}
	return 0
}

func main() {
	os.Exit(run(os.Stdin, os.Stdout, os.Stderr, os.Args[1:]))
}
