package importers

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// watched reports whether a module's version must not move: the
// Kubernetes libraries (k8s.io/*) and controller-runtime.
func watched(path string) bool {
	return strings.HasPrefix(path, "k8s.io/") || path == "sigs.k8s.io/controller-runtime"
}

// TestImportersKeepTheirVersions builds each program under testdata twice
// in a scratch copy: first with its ctrlkit file replaced by one without
// ctrlkit imports (without.go.txt), then as it is, with ctrlkit's modules
// replaced by this checkout. The watched modules must be selected at the
// same versions both times, and the program must build.
func TestImportersKeepTheirVersions(t *testing.T) {
	if testing.Short() {
		t.Skip("resolves and builds whole programs through the module proxy")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	programs, err := filepath.Glob("testdata/*/go.mod")
	if err != nil || len(programs) == 0 {
		t.Fatalf("no programs under testdata: %v", err)
	}
	for _, gomod := range programs {
		src := filepath.Dir(gomod)
		t.Run(filepath.Base(src), func(t *testing.T) {
			dir := t.TempDir()
			copyFile(t, filepath.Join(src, "go.mod"), filepath.Join(dir, "go.mod"))
			copyFile(t, filepath.Join(src, "base.go"), filepath.Join(dir, "base.go"))

			copyFile(t, filepath.Join(src, "without.go.txt"), filepath.Join(dir, "ctrlkit.go"))
			run(t, dir, "go", "mod", "tidy")
			before := selected(t, dir)
			if len(before) == 0 {
				t.Fatal("the program selects no watched module")
			}

			copyFile(t, filepath.Join(src, "ctrlkit.go"), filepath.Join(dir, "ctrlkit.go"))
			run(t, dir, "go", "mod", "edit",
				"-require=github.com/ctrlkit/ctrlkit@v0.0.0",
				"-replace=github.com/ctrlkit/ctrlkit="+repo,
				"-replace=github.com/ctrlkit/ctrlkit/ctrlruntime="+filepath.Join(repo, "ctrlruntime"))
			run(t, dir, "go", "mod", "tidy")
			after := selected(t, dir)
			run(t, dir, "go", "build", "-o", os.DevNull, ".")

			for path, was := range before {
				if now := after[path]; now != was {
					t.Errorf("%s moved from %s to %s when the program imported ctrlkit", path, was, now)
				}
			}
			for path, now := range after {
				if _, ok := before[path]; !ok {
					t.Logf("ctrlkit adds %s %s", path, now)
				}
			}
			t.Logf("kept: %s", strings.Join(sortedPairs(before), " "))
		})
	}
}

// selected is the version the go command selects for every watched module
// of the program's module graph.
func selected(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := run(t, dir, "go", "list", "-m", "-f", "{{.Path}} {{.Version}}", "all")
	versions := map[string]string{}
	for line := range strings.Lines(out) {
		path, version, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && watched(path) {
			versions[path] = version
		}
	}
	return versions
}

func sortedPairs(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"@"+v)
	}
	slices.Sort(out)
	return out
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	// The scratch programs are modules of their own: no workspace, and the
	// go.sum entries they need are fetched and checked as any user's are.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
