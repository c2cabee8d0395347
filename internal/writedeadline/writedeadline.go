// Package writedeadline bounds API writes by a deadline that holds even
// when the code doing the write ignores its context: the write runs on a
// goroutine of its own, and the caller stops waiting for it at the
// deadline. childset and podset bound every write of a sync this way, so
// that a writer (a client, a pod control, a Kind) that never returns cannot
// pin an owner in its sync, nor a worker, forever.
//
// An abandoned write keeps its goroutine until it returns, and what it
// returns then is dropped, as an API answer lost on the network would be.
// Its error wraps the context's cause (context.DeadlineExceeded, or the
// parent's cancellation), so a caller can tell "no answer" from a refusal:
// a create with no answer may have happened.
package writedeadline

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Call runs call with a context that ends after timeout and returns what
// call returns. If call has not returned when that context ends, Call
// returns at once with an error "<what>: no answer within <timeout>: <cause>"
// wrapping the context's cause, and abandons call.
func Call[T any](ctx context.Context, timeout time.Duration, what string, call func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	// Buffered, so an abandoned call's goroutine never blocks on sending.
	done := make(chan result, 1)
	go func() {
		v, err := call(ctx)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, noAnswer(ctx, what, timeout)
	}
}

// Do is Call for a write with no result.
func Do(ctx context.Context, timeout time.Duration, what string, call func(context.Context) error) error {
	_, err := Call(ctx, timeout, what, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, call(ctx)
	})
	return err
}

// Each runs call(ctx, i) for i = 0, ..., n-1 in parallel, one goroutine each,
// and returns each call's error in order. The calls share one deadline,
// timeout from the moment they all start: a context and a waiting goroutine
// per call would cost more than many a write to a fast API server. When the
// deadline passes first, Each returns at once, with the error Call would
// give (naming what(i)) for each call still unanswered, which it abandons.
// n <= 0 returns nil.
func Each(ctx context.Context, timeout time.Duration, n int, what func(i int) string, call func(ctx context.Context, i int) error) []error {
	if n <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	errs := make([]error, n)
	answered := make([]bool, n)
	var (
		mu          sync.Mutex // guards errs, answered, unanswered and abandoned
		unanswered  = n
		abandoned   bool
		allAnswered = make(chan struct{})
	)
	for i := range n {
		go func() {
			err := call(ctx, i)
			mu.Lock()
			defer mu.Unlock()
			if abandoned {
				return
			}
			errs[i], answered[i] = err, true
			if unanswered--; unanswered == 0 {
				close(allAnswered)
			}
		}()
	}
	select {
	case <-allAnswered:
		return errs
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	abandoned = true
	for i := range n {
		if !answered[i] {
			errs[i] = noAnswer(ctx, what(i), timeout)
		}
	}
	return errs
}

func noAnswer(ctx context.Context, what string, timeout time.Duration) error {
	return fmt.Errorf("%s: no answer within %v: %w", what, timeout, context.Cause(ctx))
}
