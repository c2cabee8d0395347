package writedeadline

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// A call that answers in time gives its answer, and its context carries the
// deadline; one that ignores its context is abandoned at the deadline with an
// error wrapping context.DeadlineExceeded.
func TestCall(t *testing.T) {
	v, err := Call(context.Background(), time.Minute, "answering", func(ctx context.Context) (int, error) {
		_, ok := ctx.Deadline()
		assert.True(t, ok)
		return 7, assert.AnError
	})
	assert.Equal(t, 7, v)
	assert.ErrorIs(t, err, assert.AnError)

	release := make(chan struct{})
	returned := make(chan struct{})
	start := time.Now()
	v, err = Call(context.Background(), 20*time.Millisecond, "hanging", func(context.Context) (int, error) {
		defer close(returned)
		<-release
		return 1, nil
	})
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Zero(t, v)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualError(t, err, "hanging: no answer within 20ms: context deadline exceeded")
	close(release)
	<-returned

	// The parent's cancellation ends the wait too, with its cause.
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("shutting down")
	cancel(cause)
	stuck := make(chan struct{})
	err = Do(ctx, time.Minute, "cancelled", func(context.Context) error { <-stuck; return nil })
	close(stuck)
	assert.ErrorIs(t, err, cause)
}

// The calls of Each answer each for itself; one that never answers gets a
// deadline error at the shared deadline while the others keep their answers.
func TestEach(t *testing.T) {
	release := make(chan struct{})
	const timeout = 50 * time.Millisecond
	start := time.Now()
	errs := Each(context.Background(), timeout, 3, func(i int) string { return "write " + strconv.Itoa(i) },
		func(_ context.Context, i int) error {
			switch i {
			case 1:
				<-release
				return nil
			case 2:
				return assert.AnError
			}
			return nil
		})
	took := time.Since(start)
	close(release)
	require.Len(t, errs, 3)
	assert.NoError(t, errs[0])
	assert.ErrorIs(t, errs[1], context.DeadlineExceeded)
	assert.EqualError(t, errs[1], "write 1: no answer within 50ms: context deadline exceeded")
	assert.ErrorIs(t, errs[2], assert.AnError)
	assert.GreaterOrEqual(t, took, timeout)
	assert.Less(t, took, 5*time.Second)

	assert.Nil(t, Each(context.Background(), timeout, 0, nil, nil))
	assert.Equal(t, []error{nil, nil}, Each(context.Background(), timeout, 2, nil,
		func(context.Context, int) error { return nil }))
}
