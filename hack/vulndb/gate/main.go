// Command gate reads govulncheck's JSON output (-format json) on standard
// input and fails when the code calls a vulnerable function whose OSV ID is
// not in the accepted list. Findings govulncheck makes at the import or
// module level only (the code never calls the vulnerable symbols) are
// counted but never fail, as in govulncheck's own text mode.
//
// The accepted list holds one OSV ID per line, followed by the reason it is
// accepted; '#' starts a comment. An accepted ID no longer found is
// reported, so the list can shrink, but does not fail: it may still be
// found with an older Go toolchain, or in the other module.
//
// Usage:
//
//	govulncheck -db file://DIR -format json ./... | go run ./gate -accepted FILE
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

func main() {
	acceptedFile := flag.String("accepted", "", "the file of accepted OSV IDs, one per line with its reason")
	flag.Parse()
	if *acceptedFile == "" || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	accepted, err := readAccepted(*acceptedFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gate:", err)
		os.Exit(2)
	}
	report, err := readReport(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gate:", err)
		os.Exit(2)
	}
	if !judge(os.Stdout, report, accepted) {
		os.Exit(1)
	}
}

// frame and finding are the parts of govulncheck's messages the gate reads
// (golang.org/x/vuln/internal/govulncheck, protocol v1.0.0).
type frame struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Package  string `json:"package"`
	Function string `json:"function"`
	Receiver string `json:"receiver"`
	Position *struct {
		Filename string `json:"filename"`
		Line     int    `json:"line"`
	} `json:"position"`
}

type finding struct {
	OSV          string   `json:"osv"`
	FixedVersion string   `json:"fixed_version"`
	Trace        []*frame `json:"trace"`
}

type message struct {
	Config *struct {
		ScannerVersion string `json:"scanner_version"`
		DB             string `json:"db"`
		DBLastModified string `json:"db_last_modified"`
		GoVersion      string `json:"go_version"`
		ScanLevel      string `json:"scan_level"`
	} `json:"config"`
	Finding *finding `json:"finding"`
}

type report struct {
	goVersion, db, dbModified, scanLevel string
	// called maps an OSV ID to one finding that calls a vulnerable
	// function; other lists the IDs found at the import or module level.
	called map[string]*finding
	other  map[string]bool
}

// readReport reads govulncheck's stream of JSON messages.
func readReport(r io.Reader) (*report, error) {
	rep := &report{called: map[string]*finding{}, other: map[string]bool{}}
	dec := json.NewDecoder(bufio.NewReader(r))
	configs := 0
	for {
		var m message
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading govulncheck's report: %w", err)
		}
		if m.Config != nil {
			configs++
			rep.goVersion, rep.db, rep.dbModified, rep.scanLevel = m.Config.GoVersion, m.Config.DB, m.Config.DBLastModified, m.Config.ScanLevel
		}
		f := m.Finding
		if f == nil || f.OSV == "" {
			continue
		}
		// A finding at the symbol level names the vulnerable function in
		// its first frame; the others name a package or a module only.
		if len(f.Trace) > 0 && f.Trace[0].Function != "" {
			if _, seen := rep.called[f.OSV]; !seen {
				rep.called[f.OSV] = f
			}
			continue
		}
		rep.other[f.OSV] = true
	}
	if configs == 0 {
		return nil, errors.New("no govulncheck configuration in the report: was it run with -format json?")
	}
	if rep.scanLevel != "" && rep.scanLevel != "symbol" {
		return nil, fmt.Errorf("govulncheck scanned at the %s level: the gate needs the symbol level", rep.scanLevel)
	}
	for id := range rep.called {
		delete(rep.other, id)
	}
	return rep, nil
}

// readAccepted reads the accepted IDs and their reasons.
func readAccepted(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	accepted := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if !strings.HasPrefix(fields[0], "GO-") || len(fields) < 2 {
			return nil, fmt.Errorf("%s:%d: want an OSV ID (GO-YYYY-NNNN) and the reason it is accepted", path, i+1)
		}
		accepted[fields[0]] = strings.Join(fields[1:], " ")
	}
	return accepted, nil
}

// judge prints the findings and reports whether every called one is
// accepted.
func judge(w io.Writer, rep *report, accepted map[string]string) bool {
	fmt.Fprintf(w, "gate: %s, database %s (modified %s)\n", rep.goVersion, rep.db, rep.dbModified)
	ok := true
	for _, id := range sortedKeys(rep.called) {
		f := rep.called[id]
		where := describe(f)
		if reason, yes := accepted[id]; yes {
			fmt.Fprintf(w, "  accepted %s %s: %s\n", id, where, reason)
			continue
		}
		ok = false
		fmt.Fprintf(w, "  CALLED   %s %s, fixed in %s (https://pkg.go.dev/vuln/%s)\n", id, where, orNone(f.FixedVersion), id)
		if t := callSite(f); t != "" {
			fmt.Fprintf(w, "           called from %s\n", t)
		}
	}
	for _, id := range sortedKeys(accepted) {
		if _, found := rep.called[id]; !found {
			fmt.Fprintf(w, "  not found here: accepted %s (remove it once no module or toolchain finds it)\n", id)
		}
	}
	fmt.Fprintf(w, "gate: %d vulnerabilities called (%d accepted), %d more in imported packages or required modules but not called\n",
		len(rep.called), countAccepted(rep.called, accepted), len(rep.other))
	return ok
}

func describe(f *finding) string {
	top := f.Trace[0]
	module := top.Module
	if top.Version != "" {
		module += "@" + top.Version
	}
	fn := top.Function
	if top.Receiver != "" {
		fn = strings.TrimPrefix(top.Receiver, "*") + "." + fn
	}
	return fmt.Sprintf("(%s %s.%s)", module, top.Package, fn)
}

// callSite is the innermost frame in the scanned code, the last of the
// trace that has a position.
func callSite(f *finding) string {
	for i := len(f.Trace) - 1; i >= 0; i-- {
		if p := f.Trace[i].Position; p != nil && p.Filename != "" {
			return fmt.Sprintf("%s:%d (%s.%s)", p.Filename, p.Line, f.Trace[i].Package, f.Trace[i].Function)
		}
	}
	return ""
}

func orNone(v string) string {
	if v == "" {
		return "no release yet"
	}
	return v
}

func countAccepted(called map[string]*finding, accepted map[string]string) int {
	n := 0
	for id := range called {
		if _, yes := accepted[id]; yes {
			n++
		}
	}
	return n
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
