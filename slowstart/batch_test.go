package slowstart

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// ordinalFn returns a fn that numbers its calls from 1 and fails the calls
// whose number is in fail (or every call past limit when limit >= 0). Because
// a batch starts only after the previous one has finished, the numbers of a
// batch's calls are exactly the batch's range, whatever the interleaving.
func ordinalFn(limit int, fail map[int]bool) (func(context.Context) error, *atomic.Int64) {
	var calls atomic.Int64
	return func(context.Context) error {
		n := int(calls.Add(1))
		if (limit >= 0 && n > limit) || fail[n] {
			return fmt.Errorf("call %d: %w", n, errFake)
		}
		return nil
	}, &calls
}

var errFake = errors.New("fake error")

func TestBatch(t *testing.T) {
	tests := []struct {
		name          string
		count         int
		initial       int
		limit         int // calls beyond limit fail; -1 = no limit
		fail          map[int]bool
		wantSuccesses int
		wantCalls     int
		wantErrs      int // number of errors joined in the result
	}{
		// The three upstream TestSlowStartBatch cases.
		{name: "all fail", count: 10, initial: 1, limit: 0, wantSuccesses: 0, wantCalls: 1, wantErrs: 1},
		{name: "all succeed", count: 10, initial: 1, limit: 10, wantSuccesses: 10, wantCalls: 10},
		{name: "some succeed", count: 10, initial: 1, limit: 5, wantSuccesses: 5, wantCalls: 7, wantErrs: 2},

		{name: "all fail, initial 3", count: 10, initial: 3, limit: 0, wantSuccesses: 0, wantCalls: 3, wantErrs: 3},
		{name: "failure in first of batch 3", count: 10, initial: 1, limit: -1, fail: map[int]bool{4: true}, wantSuccesses: 6, wantCalls: 7, wantErrs: 1},
		{name: "failures in batch 2", count: 10, initial: 1, limit: -1, fail: map[int]bool{2: true, 3: true}, wantSuccesses: 1, wantCalls: 3, wantErrs: 2},
		{name: "failure in last batch", count: 10, initial: 1, limit: -1, fail: map[int]bool{10: true}, wantSuccesses: 9, wantCalls: 10, wantErrs: 1},
		{name: "initial larger than count", count: 3, initial: 5, limit: -1, wantSuccesses: 3, wantCalls: 3},
		{name: "count 1", count: 1, initial: 1, limit: -1, wantSuccesses: 1, wantCalls: 1},
		{name: "large count", count: 1000, initial: 1, limit: -1, wantSuccesses: 1000, wantCalls: 1000},
		{name: "large count fails at 600", count: 1000, initial: 1, limit: 600, wantSuccesses: 600, wantCalls: 1000, wantErrs: 400},
		{name: "large count fails at 100", count: 1000, initial: 1, limit: 100, wantSuccesses: 100, wantCalls: 127, wantErrs: 27},
		{name: "count 0", count: 0, initial: 1, limit: -1},
		{name: "negative count", count: -5, initial: 1, limit: -1},
		{name: "initial 0", count: 10, initial: 0, limit: -1},
		{name: "negative initial", count: 10, initial: -1, limit: -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fn, calls := ordinalFn(tc.limit, tc.fail)
			successes, err := Batch(context.Background(), tc.count, tc.initial, fn)
			assert.Equal(t, tc.wantSuccesses, successes, "successes")
			assert.Equal(t, int64(tc.wantCalls), calls.Load(), "calls")
			if tc.wantErrs == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, errFake)
			// Even a single error comes through errors.Join, so callers can
			// always unwrap a list.
			joined, ok := err.(interface{ Unwrap() []error })
			require.True(t, ok, "errors are joined")
			assert.Len(t, joined.Unwrap(), tc.wantErrs)
		})
	}
}

func TestBatchSizes(t *testing.T) {
	tests := []struct {
		count, initial int
		want           []int
	}{
		{count: 10, initial: 1, want: []int{1, 2, 4, 3}},
		{count: 16, initial: 1, want: []int{1, 2, 4, 8, 1}},
		{count: 15, initial: 1, want: []int{1, 2, 4, 8}},
		{count: 10, initial: 3, want: []int{3, 6, 1}},
		{count: 7, initial: 10, want: []int{7}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("count=%d/initial=%d", tc.count, tc.initial), func(t *testing.T) {
			// Each call blocks until every call of its batch has started, which
			// both measures the batch size and proves the calls run concurrently.
			sizes := recordBatches(t, tc.count, tc.initial, tc.want)
			assert.Equal(t, tc.want, sizes)
		})
	}
}

// recordBatches runs Batch with a fn that acts as a barrier per expected batch
// and returns the number of calls seen in each batch.
func recordBatches(t *testing.T, count, initial int, want []int) []int {
	t.Helper()
	var mu sync.Mutex
	started := 0 // calls started in the current batch
	batchIdx := 0
	var sizes []int
	release := make(chan struct{})
	fn := func(context.Context) error {
		mu.Lock()
		started++
		if batchIdx >= len(want) {
			mu.Unlock()
			return errors.New("more batches than expected")
		}
		if started == want[batchIdx] {
			sizes = append(sizes, started)
			started = 0
			batchIdx++
			close(release)
			r := release
			release = make(chan struct{})
			mu.Unlock()
			<-r
			return nil
		}
		r := release
		mu.Unlock()
		select {
		case <-r:
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("batch did not run concurrently")
		}
	}
	successes, err := Batch(context.Background(), count, initial, fn)
	require.NoError(t, err)
	require.Equal(t, count, successes)
	return sizes
}

func TestBatchConcurrencyLargeBlockingBatch(t *testing.T) {
	// 64 calls in the last batch that all wait for each other: deadlocks (and
	// times out) unless every call of a batch has its own goroutine.
	sizes := recordBatches(t, 127, 1, []int{1, 2, 4, 8, 16, 32, 64})
	assert.Equal(t, []int{1, 2, 4, 8, 16, 32, 64}, sizes)
}

func TestWithMaxConcurrency(t *testing.T) {
	tests := []struct {
		name    string
		max     int
		count   int
		wantMax int64
	}{
		{name: "cap 1 serialises", max: 1, count: 40, wantMax: 1},
		{name: "cap 3", max: 3, count: 40, wantMax: 3},
		{name: "cap above batch size", max: 100, count: 7, wantMax: 4},
		{name: "zero means no cap", max: 0, count: 7, wantMax: 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var cur, peak atomic.Int64
			fn := func(context.Context) error {
				n := cur.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				time.Sleep(2 * time.Millisecond)
				cur.Add(-1)
				return nil
			}
			successes, err := Batch(context.Background(), tc.count, 1, fn, WithMaxConcurrency(tc.max))
			require.NoError(t, err)
			assert.Equal(t, tc.count, successes)
			assert.LessOrEqual(t, peak.Load(), tc.wantMax)
			if tc.max != 1 {
				// Sleeping calls overlap, so the cap (or the batch size) is reached.
				assert.Equal(t, tc.wantMax, peak.Load())
			}
		})
	}
}

func TestBatchContext(t *testing.T) {
	t.Run("cancelled before start", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		fn, calls := ordinalFn(-1, nil)
		successes, err := Batch(ctx, 10, 1, fn)
		assert.Equal(t, 0, successes)
		assert.Zero(t, calls.Load())
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Run("cancelled during a batch finishes that batch only", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var calls atomic.Int64
		fn := func(context.Context) error {
			if calls.Add(1) == 3 { // second batch
				cancel()
			}
			return nil
		}
		successes, err := Batch(ctx, 10, 1, fn)
		assert.Equal(t, 3, successes)
		assert.Equal(t, int64(3), calls.Load())
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Run("cause is kept", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		cause := errors.New("shutting down")
		cancel(cause)
		fn, _ := ordinalFn(-1, nil)
		_, err := Batch(ctx, 10, 1, fn)
		assert.ErrorIs(t, err, context.Canceled)
		assert.ErrorIs(t, err, cause)
	})
	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
		defer cancel()
		<-ctx.Done()
		fn, _ := ordinalFn(-1, nil)
		_, err := Batch(ctx, 10, 1, fn)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("fn receives ctx", func(t *testing.T) {
		type key struct{}
		ctx := context.WithValue(context.Background(), key{}, "v")
		var bad atomic.Int64
		_, err := Batch(ctx, 20, 1, func(c context.Context) error {
			if c.Value(key{}) != "v" {
				bad.Add(1)
			}
			return nil
		})
		require.NoError(t, err)
		assert.Zero(t, bad.Load())
	})
}

func TestBatchBadInput(t *testing.T) {
	t.Run("negative max concurrency panics", func(t *testing.T) {
		assert.PanicsWithValue(t,
			"slowstart: WithMaxConcurrency: negative cap -2; the cap must be positive, or 0 for none",
			func() { WithMaxConcurrency(-2) })
	})
	t.Run("nil options are ignored", func(t *testing.T) {
		fn, calls := ordinalFn(-1, nil)
		var none Option
		successes, err := Batch(context.Background(), 5, 1, fn, nil, WithMaxConcurrency(2), none)
		require.NoError(t, err)
		assert.Equal(t, 5, successes)
		assert.Equal(t, int64(5), calls.Load())
	})
}

// A nil fn or ctx is a programmer error, so it panics where the caller can
// recover it: in the caller's goroutine. The previous code called the nil fn
// in a goroutine of its own, which crashed the process; recover below would
// never have run.
func TestBatchNilFuncPanicsInCaller(t *testing.T) {
	recovered := func(call func()) (r any) {
		defer func() { r = recover() }()
		call()
		return nil
	}
	for _, count := range []int{0, 1, 10} {
		assert.Equal(t, "slowstart: Batch: nil function",
			recovered(func() { _, _ = Batch(context.Background(), count, 1, nil) }), "count %d", count)
		assert.Equal(t, "slowstart: BatchIndexed: nil function",
			recovered(func() { _, _ = BatchIndexed(context.Background(), count, 1, nil) }), "count %d", count)
	}
	//nolint:staticcheck // a nil context is the point of the test
	assert.Equal(t, "slowstart: nil context",
		recovered(func() { _, _ = Batch(nil, 3, 1, func(context.Context) error { return nil }) }))
}

func TestBatchIndexed(t *testing.T) {
	t.Run("every index once, consecutive per batch", func(t *testing.T) {
		var mu sync.Mutex
		seen := map[int]int{}
		successes, err := BatchIndexed(context.Background(), 37, 3, func(_ context.Context, i int) error {
			mu.Lock()
			seen[i]++
			mu.Unlock()
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, 37, successes)
		require.Len(t, seen, 37)
		for i := range 37 {
			assert.Equal(t, 1, seen[i], "index %d", i)
		}
	})
	t.Run("stops after the failing batch", func(t *testing.T) {
		// Batches are [0], [1 2], [3 4 5 6], [7..14]; index 4 fails, so the
		// indices of batch 4 are never used.
		var mu sync.Mutex
		var seen []int
		successes, err := BatchIndexed(context.Background(), 15, 1, func(_ context.Context, i int) error {
			mu.Lock()
			seen = append(seen, i)
			mu.Unlock()
			if i == 4 {
				return fmt.Errorf("index %d: %w", i, errFake)
			}
			return nil
		})
		assert.ErrorIs(t, err, errFake)
		assert.Equal(t, 6, successes)
		assert.ElementsMatch(t, []int{0, 1, 2, 3, 4, 5, 6}, seen)
	})
}

func TestNextSize(t *testing.T) {
	const maxInt = int(^uint(0) >> 1)
	tests := []struct{ size, remaining, want int }{
		{size: 1, remaining: 9, want: 2},
		{size: 4, remaining: 3, want: 3},
		{size: 3, remaining: 0, want: 0},
		{size: maxInt/2 + 1, remaining: maxInt / 2, want: maxInt / 2},
		{size: maxInt / 2, remaining: maxInt - maxInt/2, want: maxInt - maxInt/2},
		{size: maxInt / 4, remaining: maxInt, want: maxInt/4 + maxInt/4},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, nextSize(tc.size, tc.remaining), "nextSize(%d, %d)", tc.size, tc.remaining)
	}
}

func FuzzBatch(f *testing.F) {
	f.Add(10, 1, 5)
	f.Add(0, 1, 0)
	f.Add(37, 3, 20)
	f.Add(5, -1, 3)
	f.Add(64, 1, 64)
	f.Fuzz(func(t *testing.T, count, initial, limit int) {
		// Keep the run small; the arithmetic is what is being explored.
		count %= 300
		initial %= 50
		fn, calls := ordinalFn(max(limit, 0), nil)
		successes, err := Batch(context.Background(), count, initial, fn)
		if count <= 0 || initial <= 0 {
			if successes != 0 || err != nil || calls.Load() != 0 {
				t.Fatalf("no-op input made %d calls, returned (%d, %v)", calls.Load(), successes, err)
			}
			return
		}
		lim := max(limit, 0)
		if successes != min(lim, count) {
			t.Fatalf("successes = %d, want %d", successes, min(lim, count))
		}
		if (err != nil) != (lim < count) {
			t.Fatalf("err = %v with limit %d count %d", err, lim, count)
		}
		// Calls stop at the end of the batch containing call lim+1.
		made := int(calls.Load())
		if made < min(lim+1, count) || made > count {
			t.Fatalf("made %d calls", made)
		}
		if made-successes != countErrs(err) {
			t.Fatalf("%d failed calls but %d errors", made-successes, countErrs(err))
		}
	})
}

func countErrs(err error) int {
	if err == nil {
		return 0
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return len(j.Unwrap())
	}
	return 1
}
