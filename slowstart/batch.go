package slowstart

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// InitialBatchSize is the size of the first batch controllers use by default,
// the same as upstream's SlowStartInitialBatchSize: a single probe call tells
// whether the API accepts the request before more are sent.
const InitialBatchSize = 1

// Batch calls fn count times in batches of initialBatchSize, 2×, 4×, ... (each
// capped by the calls that remain). The calls of a batch run concurrently, one
// goroutine each, and the batch completes before the next starts.
//
// If any call of a batch fails, no later batch starts and Batch returns the
// number of successful calls so far, including those of the failing batch,
// together with all of that batch's errors joined by errors.Join. When every
// call succeeds it returns (count, nil).
//
// ctx is passed to every call. Once ctx is done Batch starts no new batch and
// returns the successes so far with an error wrapping ctx.Err(); calls already
// running are left to observe ctx themselves.
//
// count <= 0 or initialBatchSize <= 0 returns (0, nil) without calling fn.
// Every goroutine Batch starts has exited when it returns.
//
// A call that panics does not crash the process from Batch's goroutine: the
// rest of its batch finishes, no later batch starts, and Batch panics in the
// caller's goroutine with a *PanicError holding the value and the stack of
// the goroutine that panicked. A call that calls runtime.Goexit (t.FailNow)
// makes Batch call runtime.Goexit in the caller's goroutine likewise.
//
// A nil ctx or fn is a programmer error: Batch panics in the caller's
// goroutine, whatever the count, rather than in a goroutine of its own,
// where no caller could recover.
func Batch(ctx context.Context, count, initialBatchSize int, fn func(context.Context) error, opts ...Option) (successes int, err error) {
	if fn == nil {
		panic("slowstart: Batch: nil function")
	}
	return BatchIndexed(ctx, count, initialBatchSize, func(ctx context.Context, _ int) error { return fn(ctx) }, opts...)
}

// BatchIndexed is Batch for callers that need to know which call is which:
// fn receives i = 0, 1, ..., count-1, each exactly once until a batch fails,
// and the calls of one batch get consecutive indices. Controllers that name
// what they create by index (pod-0, pod-1, ...) use it.
//
// As with Batch, a nil ctx or fn panics in the caller's goroutine.
func BatchIndexed(ctx context.Context, count, initialBatchSize int, fn func(ctx context.Context, i int) error, opts ...Option) (successes int, err error) {
	if ctx == nil {
		panic("slowstart: nil context")
	}
	if fn == nil {
		panic("slowstart: BatchIndexed: nil function")
	}
	if count <= 0 || initialBatchSize <= 0 {
		return 0, nil
	}
	cfg := newConfig(opts)
	start := 0
	for size := min(count, initialBatchSize); size > 0; size = nextSize(size, count-start) {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return successes, stopped(ctx, ctxErr, start, count)
		}
		failed, batchErr := runBatch(ctx, start, size, cfg.maxConcurrency, fn)
		successes += size - failed
		if batchErr != nil {
			return successes, batchErr
		}
		start += size
	}
	return successes, nil
}

// nextSize doubles the batch, capped by the calls that remain after it,
// without overflowing for sizes near the int limit.
func nextSize(size, remaining int) int {
	if size > remaining/2 {
		return remaining
	}
	return 2 * size
}

func stopped(ctx context.Context, ctxErr error, done, count int) error {
	// The cause carries the reason a caller gave to CancelCauseFunc; keep both
	// so errors.Is(err, context.Canceled) still holds.
	if cause := context.Cause(ctx); cause != nil && cause != ctxErr {
		return fmt.Errorf("slowstart: stopped after %d of %d calls: %w: %w", done, count, ctxErr, cause)
	}
	return fmt.Errorf("slowstart: stopped after %d of %d calls: %w", done, count, ctxErr)
}

// runBatch runs the calls start, ..., start+size-1, one goroutine per call
// (at most maxConcurrency at a time when it is positive), waits for all of
// them, and returns how many failed and their joined errors. Every error
// counts and none cuts the batch short, which is why this is a WaitGroup
// and a semaphore rather than an errgroup, whose Wait keeps only the first.
func runBatch(ctx context.Context, start, size, maxConcurrency int, fn func(context.Context, int) error) (int, error) {
	var (
		wg sync.WaitGroup
		// next is the next index to hand out, from start. Each goroutine
		// takes its index itself, so that every call of a batch shares one
		// closure: a go statement with an argument would allocate one.
		next atomic.Int64
		// slots is the semaphore; nil when no cap is below the batch size.
		slots chan struct{}
		mu    sync.Mutex // guards errs
		errs  []error
	)
	if maxConcurrency > 0 && maxConcurrency < size {
		slots = make(chan struct{}, maxConcurrency)
	}
	var (
		// panicked is the first call that panicked or called runtime.Goexit;
		// the caller's goroutine repeats it once the batch has finished.
		panicked    *callPanic
		panickedSet atomic.Bool
	)
	call := func() {
		returned := false
		defer func() {
			if !returned {
				// recover in the deferred function itself: nil here with
				// returned false means fn called runtime.Goexit.
				p := &callPanic{value: recover(), goexit: true}
				if p.value != nil {
					p.goexit = false
					p.stack = debug.Stack()
				}
				if panickedSet.CompareAndSwap(false, true) {
					panicked = p
				}
			}
			if slots != nil {
				<-slots
			}
			wg.Done()
		}()
		if err := fn(ctx, start+int(next.Add(1)-1)); err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
		returned = true
	}
	wg.Add(size)
	for range size {
		if slots != nil {
			slots <- struct{}{} // wait for a running call to finish
		}
		go call()
	}
	wg.Wait()
	if panicked != nil {
		panicked.repeat()
	}
	if len(errs) == 0 {
		return 0, nil
	}
	return len(errs), errors.Join(errs...)
}

// PanicError is the value Batch and BatchIndexed panic with, in the caller's
// goroutine, when a call panicked in the goroutine Batch gave it.
type PanicError struct {
	// Value is what the call panicked with.
	Value any
	// Stack is the stack of the goroutine that panicked, at the panic.
	Stack []byte
}

func (p *PanicError) Error() string {
	return fmt.Sprintf("slowstart: a call panicked: %v\n\n%s", p.Value, p.Stack)
}

// Unwrap returns the panic value when it is an error, so that errors.Is and
// errors.As see through a recovered *PanicError.
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// callPanic is how a call ended when it did not return.
type callPanic struct {
	value  any
	stack  []byte
	goexit bool
}

func (p *callPanic) repeat() {
	if p.goexit {
		runtime.Goexit()
	}
	panic(&PanicError{Value: p.value, Stack: p.stack})
}
