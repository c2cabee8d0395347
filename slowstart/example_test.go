package slowstart_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
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

// BatchIndexed gives each call its index, for controllers that name what
// they create (here pods web-0 ... web-4).
func ExampleBatchIndexed() {
	var mu sync.Mutex
	var names []string
	successes, err := slowstart.BatchIndexed(context.Background(), 5, slowstart.InitialBatchSize,
		func(_ context.Context, i int) error {
			mu.Lock()
			defer mu.Unlock()
			names = append(names, fmt.Sprintf("web-%d", i))
			return nil
		})
	slices.Sort(names)
	fmt.Println(successes, err, names)
	// Output:
	// 5 <nil> [web-0 web-1 web-2 web-3 web-4]
}
