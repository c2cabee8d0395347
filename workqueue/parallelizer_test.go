package workqueue

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParallelizeUntil is client-go's scenario: every piece is processed
// exactly once, whatever the worker count and chunk size.
func TestParallelizeUntil(t *testing.T) {
	cases := []struct {
		pieces, workers, chunkSize int
	}{
		{pieces: 1000, workers: 10, chunkSize: 1},
		{pieces: 1000, workers: 10, chunkSize: 10},
		{pieces: 1000, workers: 10, chunkSize: 100},
		{pieces: 999, workers: 10, chunkSize: 13},
		{pieces: 10, workers: 100, chunkSize: 1},
		{pieces: 7, workers: 1, chunkSize: 3},
		{pieces: 5, workers: 0, chunkSize: 0},
		{pieces: 5, workers: -3, chunkSize: -1},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("pieces=%d/workers=%d/chunk=%d", tc.pieces, tc.workers, tc.chunkSize), func(t *testing.T) {
			seen := make([]atomic.Int32, tc.pieces)
			ParallelizeUntil(context.Background(), tc.workers, tc.pieces, func(p int) {
				seen[p].Add(1)
			}, WithChunkSize(tc.chunkSize))
			for p := range seen {
				require.EqualValues(t, 1, seen[p].Load(), "piece %d", p)
			}
		})
	}
}

func TestParallelizeUntilRespectsWorkerLimit(t *testing.T) {
	var running, peak atomic.Int32
	ParallelizeUntil(context.Background(), 3, 300, func(int) {
		n := running.Add(1)
		for {
			old := peak.Load()
			if n <= old || peak.CompareAndSwap(old, n) {
				break
			}
		}
		running.Add(-1)
	})
	assert.LessOrEqual(t, peak.Load(), int32(3))
	assert.GreaterOrEqual(t, peak.Load(), int32(1))
}

func TestParallelizeUntilStopsWhenContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	ParallelizeUntil(ctx, 1, 100, func(p int) {
		calls.Add(1)
		if p == 9 {
			cancel()
		}
	})
	assert.EqualValues(t, 10, calls.Load(), "no piece may start after cancel")

	calls.Store(0)
	ParallelizeUntil(ctx, 4, 100, func(int) { calls.Add(1) })
	assert.Zero(t, calls.Load(), "an already-done context starts nothing")
}

func TestParallelizeUntilBadInput(t *testing.T) {
	var calls atomic.Int32
	count := func(int) { calls.Add(1) }
	assert.NotPanics(t, func() {
		ParallelizeUntil(context.Background(), 4, 0, count)
		ParallelizeUntil(context.Background(), 4, -1, count)
		ParallelizeUntil(context.Background(), 4, 10, nil)
		ParallelizeUntil(context.Background(), 4, 3, count, nil)
	})
	assert.EqualValues(t, 3, calls.Load())

	calls.Store(0)
	//lint:ignore SA1012 a nil context is documented to mean context.Background()
	ParallelizeUntil(nil, 2, 5, count)
	assert.EqualValues(t, 5, calls.Load())
}

func TestParallelizeUntilRaisesPanicOnCaller(t *testing.T) {
	var calls atomic.Int32
	got := func() (r any) {
		defer func() { r = recover() }()
		ParallelizeUntil(context.Background(), 4, 1000, func(p int) {
			calls.Add(1)
			if p == 3 {
				panic("piece 3 failed")
			}
		})
		return nil
	}()
	assert.Equal(t, "piece 3 failed", got)
	assert.Less(t, calls.Load(), int32(1000), "the hand-out stops after a panic")
	// goleak in TestMain checks that no worker outlived the call.
}

func BenchmarkParallelizeUntil(b *testing.B) {
	for _, chunk := range []int{1, 100} {
		b.Run(fmt.Sprintf("pieces=1000/workers=10/chunk=%d", chunk), func(b *testing.B) {
			var sink atomic.Int64
			b.ReportAllocs()
			for b.Loop() {
				ParallelizeUntil(context.Background(), 10, 1000, func(p int) { sink.Add(int64(p)) }, WithChunkSize(chunk))
			}
		})
	}
}
