package process

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// Signals turns the process's first SIGINT or SIGTERM into a graceful stop
// (drain is closed) and the second into an immediate one (the returned
// context is cancelled), so an operator who will not wait for a drain can
// interrupt again. stop stops listening and cancels the context; call it
// before the process exits.
func Signals(parent context.Context) (ctx context.Context, drain <-chan struct{}, stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(parent)
	d := make(chan struct{})
	go relay(ctx, sigs, d, cancel)
	return ctx, d, func() {
		signal.Stop(sigs)
		cancel()
	}
}

// relay closes drain on the first signal and calls stopNow on the second;
// it returns when ctx is done.
func relay(ctx context.Context, sigs <-chan os.Signal, drain chan<- struct{}, stopNow func()) {
	select {
	case <-sigs:
		close(drain)
	case <-ctx.Done():
		return
	}
	select {
	case <-sigs:
		stopNow()
	case <-ctx.Done():
	}
}
