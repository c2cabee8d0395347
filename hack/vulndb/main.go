// Command vulndb turns the OSV entries of a golang.org/x/vulndb module
// version into a Go vulnerability database in the v1 layout that
// govulncheck's -db file://DIR reads (https://go.dev/security/vuln/database):
//
//	DIR/index/db.json       {"modified": ...}
//	DIR/index/modules.json  [{"path": ..., "vulns": [{"id": ..., "modified": ...}]}]
//	DIR/index/vulns.json    [{"id": ..., "modified": ..., "aliases": [...]}]
//	DIR/ID/GO-YYYY-NNNN.json, each entry as the module holds it
//
// vuln.go.dev, where the database is served, may be out of reach where the
// Go module proxy is not; golang.org/x/vulndb, the repository the database
// is built from, comes through the proxy like any module, with its entries
// under data/osv but without the index files. This command downloads the
// module with the go command (so it lands in, or is read from, the module
// cache) and writes the index.
//
// Usage:
//
//	go run . -module golang.org/x/vulndb@VERSION -out DIR
//
// The entries in the repository carry a zero "modified" time (the deployed
// database stamps them when it publishes); where an entry's is zero, the
// index uses the commit time of the module version instead, so that
// govulncheck reports how recent the data is. The modules index leaves
// out the optional "fixed" shortcut: govulncheck then reads every entry of
// a module and decides from the entry's own ranges, which is never wrong.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	module := flag.String("module", "", "the golang.org/x/vulndb module version to read, as path@version")
	out := flag.String("out", "", "the database directory to write; replaced if it exists")
	flag.Parse()
	if *module == "" || *out == "" || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	n, err := run(*module, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulndb:", err)
		os.Exit(1)
	}
	fmt.Printf("vulndb: %d entries of %s in %s\n", n, *module, *out)
}

func run(module, out string) (int, error) {
	dir, snapshot, err := download(module)
	if err != nil {
		return 0, err
	}
	entries, err := readEntries(filepath.Join(dir, "data", "osv"))
	if err != nil {
		return 0, err
	}
	if err := write(out, entries, snapshot); err != nil {
		return 0, err
	}
	return len(entries), nil
}

// download asks the go command for the module and returns its directory in
// the module cache and its commit time.
func download(module string) (dir string, snapshot time.Time, err error) {
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	// Outside any module, so no go.mod or go.sum is touched.
	cmd := exec.Command(goCmd, "mod", "download", "-json", module)
	cmd.Dir = os.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	var answer struct {
		Dir   string
		Info  string
		Error string
	}
	if jsonErr := json.Unmarshal(stdout, &answer); jsonErr == nil && answer.Error != "" {
		return "", time.Time{}, fmt.Errorf("go mod download %s: %s", module, answer.Error)
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("go mod download %s: %w: %s", module, err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(stdout, &answer); err != nil || answer.Dir == "" || answer.Info == "" {
		return "", time.Time{}, fmt.Errorf("go mod download %s: no module directory in its answer %q", module, stdout)
	}
	info, err := os.ReadFile(answer.Info)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("reading the version's info: %w", err)
	}
	var version struct{ Time time.Time }
	if err := json.Unmarshal(info, &version); err != nil {
		return "", time.Time{}, fmt.Errorf("reading %s: %w", answer.Info, err)
	}
	return answer.Dir, version.Time, nil
}

// entry is the part of an OSV entry the index is made of.
type entry struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases,omitempty"`
	Affected []struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
	} `json:"affected"`

	raw []byte
}

// readEntries reads every <ID>.json under dir, in ID order.
func readEntries(dir string) ([]*entry, error) {
	files, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("the module has no OSV entries: %w", err)
	}
	var entries []*entry
	for _, f := range files {
		name := f.Name()
		if f.IsDir() || filepath.Ext(name) != ".json" {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		e := &entry{raw: raw}
		if err := json.Unmarshal(raw, e); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		// govulncheck finds an entry by its ID alone.
		if e.ID == "" || name != e.ID+".json" || strings.ContainsAny(e.ID, `/\`) {
			return nil, fmt.Errorf("%s holds entry %q: want a file named <ID>.json", name, e.ID)
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("no OSV entries in %s", dir)
	}
	slices.SortFunc(entries, func(a, b *entry) int { return strings.Compare(a.ID, b.ID) })
	return entries, nil
}

type moduleVuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
}

type moduleMeta struct {
	Path  string       `json:"path"`
	Vulns []moduleVuln `json:"vulns"`
}

type vulnMeta struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases,omitempty"`
}

// write builds the database in a fresh directory beside out and then puts
// it in out's place, so a reader never sees half a database.
func write(out string, entries []*entry, snapshot time.Time) error {
	out = filepath.Clean(out)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), filepath.Base(out)+".new-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }() // nothing left once renamed

	var dbModified time.Time
	modules := map[string]*moduleMeta{}
	vulns := make([]vulnMeta, 0, len(entries))
	for _, e := range entries {
		modified := e.Modified
		if modified.IsZero() {
			modified = snapshot
		}
		if modified.After(dbModified) {
			dbModified = modified
		}
		vulns = append(vulns, vulnMeta{ID: e.ID, Modified: modified, Aliases: e.Aliases})
		seen := map[string]bool{}
		for _, a := range e.Affected {
			path := a.Package.Name
			if path == "" || seen[path] {
				continue
			}
			seen[path] = true
			m := modules[path]
			if m == nil {
				m = &moduleMeta{Path: path}
				modules[path] = m
			}
			m.Vulns = append(m.Vulns, moduleVuln{ID: e.ID, Modified: modified})
		}
		if err := writeFile(filepath.Join(tmp, "ID", e.ID+".json"), e.raw); err != nil {
			return err
		}
	}
	paths := make([]string, 0, len(modules))
	for p := range modules {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	moduleList := make([]*moduleMeta, 0, len(paths))
	for _, p := range paths {
		moduleList = append(moduleList, modules[p])
	}
	for name, v := range map[string]any{
		"db.json": struct {
			Modified time.Time `json:"modified"`
		}{dbModified},
		"modules.json": moduleList,
		"vulns.json":   vulns,
	} {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(tmp, "index", name), b); err != nil {
			return err
		}
	}

	if err := os.RemoveAll(out); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Rename(tmp, out)
}

func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
