package childset_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// coreFiles are the files of the pure core: they decide and write, and
// must never reach a work queue. Only driver.go (and options.go, which
// holds the driver's queue options as the convention puts every option
// there) may.
var coreFiles = []string{"doc.go", "kind.go", "reconcile.go", "identity.go", "order.go", "selector.go", "observe.go"}

// queueReferences lists what in f reaches a queue: an import of a work
// queue package, or an identifier naming a queue. RequeueAfter, the
// Result's field, is the requeue intent the core hands back, not a queue.
func queueReferences(fset *token.FileSet, f *ast.File) []string {
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

func TestCoreReachesNoQueue(t *testing.T) {
	fset := token.NewFileSet()
	for _, name := range coreFiles {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parsing %s: %v", name, err)
		}
		for _, ref := range queueReferences(fset, f) {
			t.Errorf("%s; the core must not reach a queue", ref)
		}
	}
}

// The guard must catch what it is for: an import and a use.
func TestQueueReferencesCatchesQueueUse(t *testing.T) {
	src := `package childset
import "github.com/ctrlkit/ctrlkit/workqueue"
func requeue(q workqueue.Interface[string], key string) { q.Add(key) }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "bad.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := queueReferences(fset, f); len(got) != 3 { // the import, workqueue.Interface, requeue
		t.Fatalf("found %v, want the import, the package use and the function name", got)
	}
}
