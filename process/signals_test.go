package process

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRelay: the first signal drains, the second stops at once, and the
// relay ends with its context whatever it received.
func TestRelay(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	drain := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); relay(ctx, sigs, drain, cancel) }()
	sigs <- syscall.SIGTERM
	<-drain
	require.NoError(t, ctx.Err(), "the first signal stopped at once")
	sigs <- os.Interrupt
	<-ctx.Done()
	<-done

	ctx, cancel = context.WithCancel(context.Background())
	done = make(chan struct{})
	go func() { defer close(done); relay(ctx, sigs, make(chan struct{}), cancel) }()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the relay outlived its context")
	}
}
