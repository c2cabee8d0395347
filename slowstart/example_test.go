package slowstart_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/ctrlkit/ctrlkit/slowstart"
)

// A controller creating 10 pods against an API that accepts only 5: the
// first failing batch stops the run, so only 7 requests are sent.
func ExampleBatch() {
	var created, calls atomic.Int64
	errQuota := errors.New("exceeded quota")
	createPod := func(context.Context) error {
		calls.Add(1)
		if created.Add(1) > 5 {
			return errQuota
		}
		return nil
	}
	successes, err := slowstart.Batch(context.Background(), 10, slowstart.InitialBatchSize, createPod)
	fmt.Println("successes:", successes)
	fmt.Println("requests:", calls.Load())
	fmt.Println("quota error:", errors.Is(err, errQuota))
	// Output:
	// successes: 5
	// requests: 7
	// quota error: true
}

// WithMaxConcurrency keeps large batches from opening hundreds of requests
// at once.
func ExampleWithMaxConcurrency() {
	successes, err := slowstart.Batch(context.Background(), 500, slowstart.InitialBatchSize,
		func(context.Context) error { return nil },
		slowstart.WithMaxConcurrency(16))
	fmt.Println(successes, err)
	// Output:
	// 500 <nil>
}
