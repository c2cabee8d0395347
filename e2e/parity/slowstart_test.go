package parity

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/ctrlkit/ctrlkit/slowstart"
)

// slowCase is one slowStartBatch input: the k-th call made (counting from 0
// in call order) fails when fails[k]. Calls of one batch run concurrently,
// but batches are sequential, so the set of calls in each batch, and thus
// the outcome, does not depend on scheduling.
type slowCase struct {
	count, initial int
	fails          map[int]bool
}

var errSlowStartCall = errors.New("call failed")

func genSlowCase(r *rand.Rand) slowCase {
	c := slowCase{count: oneOf(r, -1, 0, 1, 2, 3, 7, 16, 31, 64, 100, r.IntN(300)), initial: oneOf(r, -1, 0, 1, 1, 1, 2, 3, 5, 50), fails: map[int]bool{}}
	for range r.IntN(3) {
		if c.count > 0 {
			c.fails[r.IntN(c.count+c.count/2+1)] = true
		}
	}
	return c
}

func describeSlow(c slowCase) string {
	return fmt.Sprintf("count=%d initial=%d failing calls=%v", c.count, c.initial, c.fails)
}

func checkSlow(c slowCase) string {
	var upCalls atomic.Int64
	wantN, wantErr := upstreamSlowStartBatch(c.count, c.initial, func() error {
		if c.fails[int(upCalls.Add(1)-1)] {
			return errSlowStartCall
		}
		return nil
	})
	var ourCalls atomic.Int64
	gotN, gotErr := slowstart.Batch(context.Background(), c.count, c.initial, func(context.Context) error {
		if c.fails[int(ourCalls.Add(1)-1)] {
			return errSlowStartCall
		}
		return nil
	})
	if wantN != gotN {
		return fmt.Sprintf("successes: upstream %d, ctrlkit %d", wantN, gotN)
	}
	if upCalls.Load() != ourCalls.Load() {
		return fmt.Sprintf("calls made: upstream %d, ctrlkit %d", upCalls.Load(), ourCalls.Load())
	}
	// Upstream returns one of the failing batch's errors, ctrlkit all of them
	// joined; both must carry the call's error.
	if (wantErr == nil) != (gotErr == nil) || wantErr != nil && !errors.Is(gotErr, wantErr) {
		return fmt.Sprintf("error: upstream %v, ctrlkit %v", wantErr, gotErr)
	}
	return ""
}

func TestParitySlowStartBatch(t *testing.T) {
	runLeafTarget(t, "SlowStartBatch", genSlowCase, checkSlow, describeSlow)
}
