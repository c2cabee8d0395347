package workqueue_test

import (
	"context"
	"errors"
	"fmt"
	"k8s.io/utils/ptr"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/workqueue"
)

// A basic worker loop: items are handed to one worker at a time, and
// ShutDownWithDrain waits until the queue is empty and every worker is done.
func Example() {
	q := workqueue.New[string](workqueue.WithName("example"))
	for _, key := range []string{"default/a", "default/b", "default/a"} {
		q.Add(key) // the second "default/a" collapses into the first
	}

	var mu sync.Mutex
	var processed []string
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			key, shutdown := q.Get()
			if shutdown {
				return
			}
			mu.Lock()
			processed = append(processed, key)
			mu.Unlock()
			q.Done(key)
		}
	})
	q.ShutDownWithDrain()
	wg.Wait()
	fmt.Println(processed)
	// Output: [default/a default/b]
}

// Rate-limited retries: a failing item comes back after a growing delay
// until it succeeds; Forget then resets its backoff.
func ExampleNewRateLimiting() {
	limiter := workqueue.NewItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second)
	q := workqueue.NewRateLimiting[string](limiter)
	defer q.ShutDown()

	attempts := 0
	sync := func(key string) error {
		attempts++
		if attempts < 3 {
			return errors.New("not yet")
		}
		return nil
	}

	q.Add("default/a")
	for {
		key, _ := q.Get()
		err := sync(key)
		if err != nil {
			fmt.Printf("attempt %d failed, retry #%d\n", attempts, q.NumRequeues(key)+1)
			q.AddRateLimited(key)
			q.Done(key)
			continue
		}
		q.Forget(key)
		q.Done(key)
		fmt.Printf("attempt %d succeeded, requeues now %d\n", attempts, q.NumRequeues(key))
		break
	}
	// Output:
	// attempt 1 failed, retry #1
	// attempt 2 failed, retry #2
	// attempt 3 succeeded, requeues now 0
}

// Priorities: real changes overtake a resync storm queued at low priority.
func ExampleQueue_AddWithOpts() {
	q := workqueue.New[string]()
	defer q.ShutDown()
	q.AddWithOpts(workqueue.AddOpts{Priority: ptr.To(-100)}, "resync/1", "resync/2")
	q.Add("changed/x")
	for q.Len() > 0 {
		key, prio, _ := q.GetWithPriority()
		fmt.Println(key, prio)
		q.Done(key)
	}
	// Output:
	// changed/x 0
	// resync/1 -100
	// resync/2 -100
}

// GetContext stops a worker without shutting the queue down.
func ExampleQueue_GetContext() {
	q := workqueue.New[string]()
	defer q.ShutDown()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, stop := q.GetContext(ctx)
	fmt.Println(stop, ctx.Err() != nil, q.ShuttingDown())
	// Output: true true false
}

// Add cancels a pending AddAfter instead of running the item twice.
func ExampleQueue_AddAfter() {
	q := workqueue.NewDelaying[string]()
	defer q.ShutDown()
	q.AddAfter("default/a", time.Hour)
	fmt.Println(q.Len(), q.NumWaiting())
	q.Add("default/a")
	fmt.Println(q.Len(), q.NumWaiting())
	// Output:
	// 0 1
	// 1 0
}

// KeyFunc turns what an informer hands an event handler into a queue key,
// tombstones of missed deletions included.
func ExampleKeyFunc() {
	q := workqueue.New[string]()
	defer q.ShutDown()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-0"}}
	for _, obj := range []any{pod, cache.DeletedFinalStateUnknown{Key: "default/web-1", Obj: pod}} {
		key, err := workqueue.KeyFunc(obj)
		if err != nil {
			fmt.Println(err)
			continue
		}
		q.Add(key)
	}
	fmt.Println(q.Len(), "keys; resync period", workqueue.NoResyncPeriodFunc())
	// Output: 2 keys; resync period 0s
}
