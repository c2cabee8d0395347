package simkit

import (
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// TestLogger returns a logger that writes every entry, errors included, to
// tb's log, for WithLogger or manager.Options.Logger: a reconcile that fails
// under simkit then says why in the test's output. Entries that come once
// the cleanup TestLogger registers has run (a manager's goroutines stopping
// late) are dropped: a test's log refuses writes once the test is over.
func TestLogger(tb testing.TB) logr.Logger {
	var mu sync.Mutex
	open := true
	tb.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		open = false
	})
	return funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		if open {
			tb.Log(prefix, args)
		}
	}, funcr.Options{})
}
