package slowstart

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ctrlkit/ctrlkit/internal/benchpair"
)

// goroutinePerCall is the design upstream's slowStartBatch uses, written here
// as the baseline: one goroutine per call, a WaitGroup and an error channel
// per batch, and the first error received returned.
func goroutinePerCall(count, initialBatchSize int, fn func() error) (int, error) {
	remaining := count
	successes := 0
	for size := min(remaining, initialBatchSize); size > 0; size = min(2*size, remaining) {
		errs := make(chan error, size)
		var wg sync.WaitGroup
		wg.Add(size)
		for range size {
			go func() {
				defer wg.Done()
				if err := fn(); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		successes += size - len(errs)
		if len(errs) > 0 {
			return successes, <-errs
		}
		remaining -= size
	}
	return successes, nil
}

// BenchmarkBatch measures the scheduling overhead of a whole run with a no-op
// fn. ns/call is the overhead per call; compare impl=ctrlkit with
// impl=goroutinepercall at the same count.
func BenchmarkBatch(b *testing.B) {
	ctx := context.Background()
	noop := func(context.Context) error { return nil }
	noopPlain := func() error { return nil }
	for _, count := range []int{1_000, 10_000} {
		benchpair.Run(b, fmt.Sprintf("count=%d/", count), "goroutinepercall", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if n, err := Batch(ctx, count, InitialBatchSize, noop); n != count || err != nil {
					b.Fatalf("got (%d, %v)", n, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*count), "ns/call")
		}, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if n, err := goroutinePerCall(count, InitialBatchSize, noopPlain); n != count || err != nil {
					b.Fatalf("got (%d, %v)", n, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*count), "ns/call")
		})
	}
}

// BenchmarkBatchBlocking is the realistic case: every call blocks for 1 ms,
// as an API call does. 1,023 calls make 10 batches, so the floor is 10 ms a
// run whatever the scheduling; the ratio to goroutinepercall shows whether
// anything but the calls themselves costs time.
func BenchmarkBatchBlocking(b *testing.B) {
	ctx := context.Background()
	const count = 1023
	block := func(context.Context) error { time.Sleep(time.Millisecond); return nil }
	blockPlain := func() error { time.Sleep(time.Millisecond); return nil }
	benchpair.Run(b, "", "goroutinepercall", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if n, err := Batch(ctx, count, InitialBatchSize, block); n != count || err != nil {
				b.Fatalf("got (%d, %v)", n, err)
			}
		}
	}, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if n, err := goroutinePerCall(count, InitialBatchSize, blockPlain); n != count || err != nil {
				b.Fatalf("got (%d, %v)", n, err)
			}
		}
	})
}

// BenchmarkBatchFirstBatchFails is the steady state of a controller whose
// creates are all rejected: each sync makes one doomed call.
func BenchmarkBatchFirstBatchFails(b *testing.B) {
	ctx := context.Background()
	fail := func(context.Context) error { return errBench }
	failPlain := func() error { return errBench }
	benchpair.Run(b, "", "goroutinepercall", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = Batch(ctx, 500, InitialBatchSize, fail)
		}
	}, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = goroutinePerCall(500, InitialBatchSize, failPlain)
		}
	})
}

// BenchmarkBatchMaxConcurrency shows the cost of capping concurrency.
func BenchmarkBatchMaxConcurrency(b *testing.B) {
	ctx := context.Background()
	noop := func(context.Context) error { return nil }
	for _, c := range []int{1, 8} {
		b.Run(fmt.Sprintf("count=10000/max=%d", c), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = Batch(ctx, 10_000, InitialBatchSize, noop, WithMaxConcurrency(c))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*10_000), "ns/call")
		})
	}
}

var errBench = fmt.Errorf("bench error")
