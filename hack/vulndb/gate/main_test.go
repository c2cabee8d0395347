package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A report as govulncheck -format json writes it: one config, then OSV
// entries and findings; a finding whose first frame names a function is
// at the symbol level.
const sampleReport = `
{"config":{"protocol_version":"v1.0.0","scanner_version":"v1.9.0","db":"file:///db","db_last_modified":"2026-11-05T23:49:57Z","go_version":"go1.26.8","scan_level":"symbol","scan_mode":"source"}}
{"progress":{"message":"Scanning your code"}}
{"osv":{"id":"GO-2026-0001"}}
{"finding":{"osv":"GO-2026-0001","fixed_version":"v0.60.0","trace":[{"module":"golang.org/x/net","version":"v0.38.0","package":"golang.org/x/net/http2"}]}}
{"finding":{"osv":"GO-2026-0001","fixed_version":"v0.60.0","trace":[{"module":"golang.org/x/net","version":"v0.38.0","package":"golang.org/x/net/http2","function":"RoundTrip","receiver":"*Transport"},{"module":"example.com/m","package":"example.com/m/p","function":"Call","position":{"filename":"p/p.go","line":7}}]}}
{"finding":{"osv":"GO-2026-0002","trace":[{"module":"stdlib","version":"v1.26.8","package":"net/http","function":"Do","receiver":"*Client"}]}}
{"finding":{"osv":"GO-2026-0003","trace":[{"module":"golang.org/x/text","version":"v0.23.0"}]}}
`

func TestGate(t *testing.T) {
	rep, err := readReport(strings.NewReader(sampleReport))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.called) != 2 || len(rep.other) != 1 || !rep.other["GO-2026-0003"] {
		t.Fatalf("called %v, other %v", rep.called, rep.other)
	}

	var out strings.Builder
	if judge(&out, rep, map[string]string{"GO-2026-0001": "floor"}) {
		t.Errorf("a called vulnerability that is not accepted passed:\n%s", out.String())
	}
	for _, want := range []string{
		"accepted GO-2026-0001 (golang.org/x/net@v0.38.0 golang.org/x/net/http2.Transport.RoundTrip): floor",
		"CALLED   GO-2026-0002 (stdlib@v1.26.8 net/http.Client.Do), fixed in no release yet",
		"2 vulnerabilities called (1 accepted), 1 more",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	accepted := map[string]string{"GO-2026-0001": "floor", "GO-2026-0002": "toolchain", "GO-2026-0099": "gone"}
	if !judge(&out, rep, accepted) {
		t.Errorf("every called vulnerability is accepted, yet the gate failed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "not found here: accepted GO-2026-0099") {
		t.Errorf("an accepted ID no longer found is not reported:\n%s", out.String())
	}
}

func TestGateRefusesOtherReports(t *testing.T) {
	if _, err := readReport(strings.NewReader(`Your code is affected by 1 vulnerability`)); err == nil {
		t.Error("text output was accepted as a report")
	}
	if _, err := readReport(strings.NewReader(`{"finding":{"osv":"GO-2026-0001"}}`)); err == nil {
		t.Error("a report without its config was accepted")
	}
	if _, err := readReport(strings.NewReader(`{"config":{"scan_level":"module"}}`)); err == nil {
		t.Error("a module-level scan, which can't tell called vulnerabilities, was accepted")
	}
}

func TestReadAccepted(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if err := os.WriteFile(good, []byte("# comment\n\nGO-2026-0001  floor: x/net v0.38.0 # trailing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	accepted, err := readAccepted(good)
	if err != nil || accepted["GO-2026-0001"] != "floor: x/net v0.38.0" || len(accepted) != 1 {
		t.Fatalf("%v %v", accepted, err)
	}
	for _, body := range []string{"GO-2026-0001\n", "CVE-2026-1 reason\n"} {
		bad := filepath.Join(dir, "bad")
		if err := os.WriteFile(bad, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readAccepted(bad); err == nil {
			t.Errorf("%q was accepted", body)
		}
	}
}
