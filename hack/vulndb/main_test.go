package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func writeEntry(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestIndex(t *testing.T) {
	src := t.TempDir()
	writeEntry(t, src, "GO-2026-0002.json", `{"id":"GO-2026-0002","modified":"0001-01-01T00:00:00Z","aliases":["CVE-1"],
		"affected":[{"package":{"name":"stdlib"}},{"package":{"name":"golang.org/x/net"}},{"package":{"name":"golang.org/x/net"}}]}`)
	writeEntry(t, src, "GO-2026-0001.json", `{"id":"GO-2026-0001","modified":"2026-01-02T03:04:05Z","affected":[{"package":{"name":"golang.org/x/net"}}]}`)
	writeEntry(t, src, "README.md", "not an entry")

	entries, err := readEntries(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].ID != "GO-2026-0001" {
		t.Fatalf("entries in ID order expected, got %d, first %q", len(entries), entries[0].ID)
	}

	snapshot := time.Date(2026, 11, 5, 23, 49, 57, 0, time.UTC)
	out := filepath.Join(t.TempDir(), "db")
	if err := os.MkdirAll(filepath.Join(out, "stale"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := write(out, entries, snapshot); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "stale")); !os.IsNotExist(err) {
		t.Errorf("the old database should have been replaced: %v", err)
	}

	var db struct{ Modified time.Time }
	readJSON(t, filepath.Join(out, "index", "db.json"), &db)
	if !db.Modified.Equal(snapshot) {
		t.Errorf("db modified %v, want the snapshot time %v (the newest, as a zero time counts as the snapshot)", db.Modified, snapshot)
	}

	var modules []struct {
		Path  string
		Vulns []struct {
			ID       string
			Modified time.Time
			Fixed    string
		}
	}
	readJSON(t, filepath.Join(out, "index", "modules.json"), &modules)
	if len(modules) != 2 || modules[0].Path != "golang.org/x/net" || modules[1].Path != "stdlib" {
		t.Fatalf("modules index: %+v", modules)
	}
	net := modules[0].Vulns
	if len(net) != 2 || net[0].ID != "GO-2026-0001" || net[1].ID != "GO-2026-0002" {
		t.Fatalf("x/net's vulns listed once each, in ID order: %+v", net)
	}
	if !net[1].Modified.Equal(snapshot) || net[0].Modified.Year() != 2026 || net[0].Fixed != "" {
		t.Errorf("x/net's vulns: %+v", net)
	}

	for _, id := range []string{"GO-2026-0001", "GO-2026-0002"} {
		got, err := os.ReadFile(filepath.Join(out, "ID", id+".json"))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(filepath.Join(src, id+".json"))
		if string(got) != string(want) {
			t.Errorf("%s is not copied verbatim", id)
		}
	}
	var vulns []struct {
		ID      string
		Aliases []string
	}
	readJSON(t, filepath.Join(out, "index", "vulns.json"), &vulns)
	if len(vulns) != 2 || vulns[1].Aliases[0] != "CVE-1" {
		t.Errorf("vulns index: %+v", vulns)
	}
}

func TestIndexRefusesMisnamedEntries(t *testing.T) {
	src := t.TempDir()
	writeEntry(t, src, "GO-2026-0001.json", `{"id":"GO-2026-0009"}`)
	if _, err := readEntries(src); err == nil {
		t.Error("an entry whose file is not named after its ID was accepted")
	}
	empty := t.TempDir()
	if _, err := readEntries(empty); err == nil {
		t.Error("a directory without entries was accepted")
	}
	bad := t.TempDir()
	writeEntry(t, bad, "GO-2026-0001.json", `{"id":`)
	if _, err := readEntries(bad); err == nil {
		t.Error("a broken entry was accepted")
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
