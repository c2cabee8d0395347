// Package purecore checks that a reconcile core is pure: that its source
// files never reach a work queue. childset and podset run it from a test
// over their own directory, so a core that starts queueing fails the
// build instead of being caught in review.
package purecore

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// QueueReferences lists what in f reaches a queue: an import of a package
// whose path says queue, or an identifier naming a queue. RequeueAfter, a
// Result's field, is the requeue intent a core hands back, not a queue.
func QueueReferences(fset *token.FileSet, f *ast.File) []string {
	var found []string
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); strings.Contains(strings.ToLower(path), "queue") {
			found = append(found, fmt.Sprintf("%s: imports %s", fset.Position(imp.Pos()), path))
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name != "RequeueAfter" && strings.Contains(strings.ToLower(id.Name), "queue") {
			found = append(found, fmt.Sprintf("%s: names %s", fset.Position(id.Pos()), id.Name))
		}
		return true
	})
	return found
}

// Check parses every non-test Go file of dir except the drivers named in
// drivers (base names), and returns the queue references it finds. A new
// file is checked without anyone listing it.
func Check(dir string, drivers ...string) ([]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var found []string
	for _, name := range names {
		base := filepath.Base(name)
		if strings.HasSuffix(base, "_test.go") || slices.Contains(drivers, base) {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", name, err)
		}
		found = append(found, QueueReferences(fset, f)...)
	}
	return found, nil
}
