package layers_test

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ctrlkit/ctrlkit/"

// allowed lists, for every package of the library module, the ctrlkit
// packages outside internal/ it may import (CONTRIBUTING.md, Layers).
// internal/ packages may import only one another, and any package may
// import them; examples/ may import anything but e2e.
var allowed = map[string][]string{
	// Leaves.
	"claim":         nil,
	"consistency":   nil,
	"expectations":  nil,
	"objectcontrol": nil,
	"podstate":      nil,
	"process":       nil,
	"shard":         nil,
	"simcluster":    nil,
	"slowstart":     nil,
	"validation":    nil,
	"workqueue":     nil,
	// Over the leaves.
	"podcontrol": {"objectcontrol"},
	"podranking": {"podstate"},
	"status":     {"podstate"},
	"history":    {"claim"},
	// The Prometheus adapter, of the queue, the ring and the set core's
	// measurements.
	"workqueue/prommetrics": {"consistency", "podcontrol", "shard", "workqueue"},
	// The set core, then its pod specialisation.
	"childset": {"claim", "consistency", "expectations", "history", "objectcontrol", "podranking", "slowstart", "status", "workqueue"},
	"podset": {"childset", "claim", "consistency", "expectations", "history", "objectcontrol", "podcontrol",
		"podranking", "podstate", "slowstart", "status", "workqueue"},
}

func TestImportsRunOneWay(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		// Other modules, and the tree's own tooling and caches.
		if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && rel != "." {
			return filepath.SkipDir
		}
		pkg, err := build.Default.ImportDir(path, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		}
		if err != nil {
			return err
		}
		seen[rel] = true
		checkImports(t, rel, pkg.Imports)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range allowed {
		if !seen[pkg] {
			t.Errorf("the table names %s, which the module does not have", pkg)
		}
	}
}

func checkImports(t *testing.T, pkg string, imports []string) {
	t.Helper()
	internal := strings.HasPrefix(pkg, "internal/")
	example := strings.HasPrefix(pkg, "examples/")
	want, listed := allowed[pkg]
	if !internal && !example && !listed {
		t.Errorf("%s has no place in the layering: add it to CONTRIBUTING.md and to this test's table", pkg)
		return
	}
	for _, imp := range imports {
		dep, ok := strings.CutPrefix(imp, module)
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(dep, "internal/"):
		case internal:
			t.Errorf("%s imports %s: internal packages import only one another", pkg, dep)
		case strings.HasPrefix(dep, "examples/") && !example:
			t.Errorf("%s imports the example %s", pkg, dep)
		case example:
		case !slices.Contains(want, dep):
			t.Errorf("%s imports %s, which its layer may not", pkg, dep)
		}
	}
}
