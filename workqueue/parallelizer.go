package workqueue

import (
	"context"
	"sync"
	"sync/atomic"
)

// ParallelizeOption configures ParallelizeUntil.
type ParallelizeOption func(*parallelizeConfig)

type parallelizeConfig struct {
	chunkSize int
}

// WithChunkSize makes each worker claim c consecutive pieces at a time, which
// amortises the hand-out when pieces are cheap. Values below 1 mean 1.
func WithChunkSize(c int) ParallelizeOption {
	return func(cfg *parallelizeConfig) { cfg.chunkSize = c }
}

// ParallelizeUntil calls doWorkPiece for every piece in [0, pieces) on at
// most workers goroutines, and returns once every started call has returned.
// It checks ctx before each piece: once ctx is done, no further piece starts.
// A nil ctx means context.Background(). pieces <= 0 returns at once;
// workers < 1 counts as 1.
//
// Unlike client-go's, chunks are handed out through an atomic counter rather
// than a pre-filled channel, so a call allocates a fixed handful of objects
// whatever the number of pieces. A panic in doWorkPiece stops the hand-out
// and is re-raised on the caller's goroutine after the workers have
// returned, where the caller can recover it; client-go re-panics on the
// worker goroutine, which no caller can recover.
func ParallelizeUntil(ctx context.Context, workers, pieces int, doWorkPiece func(piece int), opts ...ParallelizeOption) {
	if pieces <= 0 || doWorkPiece == nil {
		return
	}
	if ctx == nil {
		ctx = context.Background()
	}
	cfg := parallelizeConfig{chunkSize: 1}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	chunk := max(cfg.chunkSize, 1)
	chunks := (pieces + chunk - 1) / chunk
	workers = min(max(workers, 1), chunks)

	var (
		next      atomic.Int64 // index of the next chunk to hand out
		stop      atomic.Bool  // set by a panicking worker
		panicOnce sync.Once
		panicked  any
		wg        sync.WaitGroup
	)
	done := ctx.Done()
	work := func() {
		defer wg.Done()
		defer func() {
			if r := recover(); r != nil {
				stop.Store(true)
				panicOnce.Do(func() { panicked = r })
			}
		}()
		for !stop.Load() {
			c := int(next.Add(1) - 1)
			if c >= chunks {
				return
			}
			end := min((c+1)*chunk, pieces)
			for p := c * chunk; p < end; p++ {
				select {
				case <-done:
					return
				default:
				}
				doWorkPiece(p)
			}
		}
	}
	wg.Add(workers)
	for range workers - 1 {
		go work()
	}
	// The caller's goroutine is one of the workers: one goroutine fewer to
	// start, and a single-worker call starts none.
	work()
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
}
