package slowstart

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// InitialBatchSize is the size of the first batch controllers use by default,
// the same as upstream's SlowStartInitialBatchSize: a single probe call tells
// whether the API accepts the request before more are sent.
const InitialBatchSize = 1

// ErrNilFunc is returned by Batch when fn is nil and there is work to do.
var ErrNilFunc = errors.New("slowstart: fn is nil")

// Batch calls fn count times in batches of initialBatchSize, 2×, 4×, ... (each
// capped by the calls that remain). The calls of a batch run concurrently and
// the batch completes before the next starts.
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
func Batch(ctx context.Context, count, initialBatchSize int, fn func(context.Context) error, opts ...Option) (successes int, err error) {
	if count <= 0 || initialBatchSize <= 0 {
		return 0, nil
	}
	if fn == nil {
		return 0, ErrNilFunc
	}
	if ctx == nil {
		ctx = context.Background()
	}
	var cfg config
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}

	remaining := count
	for size := min(remaining, initialBatchSize); size > 0; size = nextSize(size, remaining) {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return successes, stopped(ctx, ctxErr, count-remaining, count)
		}
		failed, batchErr := runBatch(ctx, size, cfg.maxConcurrency, fn)
		successes += size - failed
		if batchErr != nil {
			return successes, batchErr
		}
		remaining -= size
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

// batch is the shared state of one batch. Calls are handed out by an atomic
// counter so that any goroutine that is free takes the next call.
type batch struct {
	ctx  context.Context
	fn   func(context.Context) error
	size int64
	next atomic.Int64 // calls taken so far (may overshoot size)
	// slots is how many more helper goroutines may be started. It goes
	// negative once exhausted.
	slots atomic.Int64
	wg    sync.WaitGroup

	mu   sync.Mutex
	errs []error
}

// spawn starts up to two helpers, each only while some call is still
// untaken. Every goroutine spawns before taking its first call, so helpers
// fan out as a binary tree: if every call blocks, each call still gets its
// own goroutine after log2(size) generations, and if calls are fast the
// goroutines already running drain the counter and the tree stops growing.
func (b *batch) spawn() {
	for range 2 {
		if b.next.Load() >= b.size || b.slots.Add(-1) < 0 {
			return
		}
		b.wg.Add(1) // the spawning goroutine is itself counted, so Wait can't have returned
		go b.helper()
	}
}

func (b *batch) helper() {
	defer b.wg.Done()
	b.spawn()
	b.work()
}

// work runs calls until none of the batch is left untaken.
func (b *batch) work() {
	for b.next.Add(1) <= b.size {
		if err := b.fn(b.ctx); err != nil {
			b.mu.Lock()
			b.errs = append(b.errs, err)
			b.mu.Unlock()
		}
	}
}

// runBatch runs size calls and returns how many failed and their joined
// errors. The caller's goroutine is one of the workers.
func runBatch(ctx context.Context, size, maxConcurrency int, fn func(context.Context) error) (int, error) {
	b := &batch{ctx: ctx, fn: fn, size: int64(size)}
	helpers := size - 1
	if maxConcurrency > 0 && helpers > maxConcurrency-1 {
		helpers = maxConcurrency - 1
	}
	b.slots.Store(int64(helpers))
	b.spawn()
	b.work()
	b.wg.Wait()
	// All helpers have returned, so errs is no longer shared.
	if len(b.errs) == 0 {
		return 0, nil
	}
	return len(b.errs), errors.Join(b.errs...)
}
