package purecore

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const queueing = `package core
import "github.com/ctrlkit/ctrlkit/workqueue"
func requeue(q workqueue.Interface[string], key string) { q.Add(key) }
`

// The check must catch what it is for: an import and a use.
func TestQueueReferencesCatchesQueueUse(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "bad.go", queueing, 0)
	require.NoError(t, err)
	assert.Len(t, QueueReferences(fset, f), 3, "the import, workqueue.Interface and requeue")
}

func TestCheckSkipsDriversAndTests(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600))
	}
	write("core.go", "package core\nfunc Reconcile() (r struct{ RequeueAfter int }) { return r }\n")
	write("driver.go", queueing)
	write("driver_test.go", queueing)
	found, err := Check(dir, "driver.go")
	require.NoError(t, err)
	assert.Empty(t, found)

	write("new.go", queueing)
	found, err = Check(dir, "driver.go")
	require.NoError(t, err)
	assert.Len(t, found, 3, "a file nobody listed is checked")
}
