package slowstart

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// panickingCall panics with errFake in call number 2, the first call of the
// second batch (sizes 1, 2, 4, ...).
func panickingCall(calls *atomic.Int64) func(context.Context, int) error {
	return func(context.Context, int) error {
		if calls.Add(1) == 2 {
			panic(errFake)
		}
		return nil
	}
}

// A call that panics must not kill the process from Batch's goroutine: the
// panic is repeated in the caller's goroutine, where it can be recovered, with
// the value and the stack of the call. The previous code let the panic escape
// a goroutine of its own, which crashed the test binary before recover ran.
func TestBatchPanicRepeatsInCaller(t *testing.T) {
	var calls atomic.Int64
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		_, _ = BatchIndexed(context.Background(), 10, 1, panickingCall(&calls))
		t.Error("BatchIndexed returned instead of panicking")
	}()
	var p *PanicError
	require.ErrorAs(t, recovered.(error), &p)
	assert.Equal(t, errFake, p.Value)
	assert.ErrorIs(t, p, errFake, "Unwrap gives the panic value when it is an error")
	assert.Contains(t, string(p.Stack), "panickingCall", "the stack is the panicking goroutine's")
	assert.Contains(t, p.Error(), errFake.Error())
	// The second batch (calls 2 and 3) finished, and no third batch started.
	assert.Equal(t, int64(3), calls.Load())

	// The same through Batch, with a non-error value and a concurrency cap.
	var n atomic.Int64
	func() {
		defer func() { recovered = recover() }()
		_, _ = Batch(context.Background(), 10, 4, func(context.Context) error {
			if n.Add(1) == 3 {
				panic("boom")
			}
			return nil
		}, WithMaxConcurrency(2))
	}()
	p, ok := recovered.(*PanicError)
	require.True(t, ok, "recovered %T", recovered)
	assert.Equal(t, "boom", p.Value)
	assert.NoError(t, p.Unwrap())
	assert.Equal(t, int64(4), n.Load(), "the first batch of 4 ran to its end")
}

// A call that calls runtime.Goexit (as t.FailNow does) ends the caller's
// goroutine the same way once its batch has finished. The previous code never
// counted that call done, so Batch waited for ever.
func TestBatchGoexitRepeatsInCaller(t *testing.T) {
	returned := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		_, _ = Batch(context.Background(), 3, 1, func(context.Context) error {
			runtime.Goexit()
			return nil
		})
		close(returned)
	}()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("Batch never finished after a call called runtime.Goexit")
	}
	select {
	case <-returned:
		t.Error("Batch returned after a call called runtime.Goexit")
	default:
	}
}
