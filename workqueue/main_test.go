package workqueue

import (
	"testing"

	"go.uber.org/goleak"
	cgworkqueue "k8s.io/client-go/util/workqueue"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// Drop-in compatibility with client-go, checked at compile time.
var (
	_ cgworkqueue.TypedInterface[string]             = (*Queue[string])(nil)
	_ cgworkqueue.TypedDelayingInterface[string]     = (*Queue[string])(nil)
	_ cgworkqueue.TypedRateLimitingInterface[string] = (*RateLimitingQueue[string])(nil)
	_ RateLimitingInterface[string]                  = (*RateLimitingQueue[string])(nil)

	_ cgworkqueue.TypedRateLimiter[string] = (*ItemExponentialFailureRateLimiter[string])(nil)
	_ cgworkqueue.TypedRateLimiter[string] = (*ItemFastSlowRateLimiter[string])(nil)
	_ cgworkqueue.TypedRateLimiter[string] = (*MaxOfRateLimiter[string])(nil)
	_ cgworkqueue.TypedRateLimiter[string] = (*BucketRateLimiter[string])(nil)
	_ cgworkqueue.TypedRateLimiter[string] = (*WithMaxWaitRateLimiter[string])(nil)
	_ cgworkqueue.TypedRateLimiter[string] = DefaultControllerRateLimiter[string]()

	// A client-go limiter works in ctrlkit too.
	_ RateLimiter[string] = cgworkqueue.DefaultTypedControllerRateLimiter[string]()

	_ MetricsProvider = cgworkqueue.MetricsProvider(nil)
)

// checkInvariants verifies the internal structure; tests call it after
// every step of the model-based tests.
func (q *Queue[T]) checkInvariants(t testing.TB) {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	queued, waiting, processing := 0, 0, 0
	for item, i := range q.s.index {
		n := q.s.at(i)
		if n.item != item {
			t.Fatalf("index maps %v to node %d, which holds %v", item, i, n.item)
		}
		switch n.state {
		case stQueued:
			queued++
		case stWaiting:
			waiting++
			if q.heap[n.next] != i {
				t.Fatalf("heap index of %v is stale", item)
			}
		case stProcessing, stProcessing | stDirty:
			processing++
		case stProcessing | stWaiting:
			processing++
			waiting++
		default:
			t.Fatalf("item %v has invalid state %b", item, n.state)
		}
	}
	listed := 0
	for k, l := range q.levels {
		if k > 0 && q.levels[k-1].prio <= l.prio {
			t.Fatalf("levels out of order")
		}
		c := 0
		prev := nilIdx
		for i := l.head; i != nilIdx; i = q.s.at(i).next {
			n := q.s.at(i)
			if n.prio != l.prio || n.state != stQueued || n.prev != prev {
				t.Fatalf("level %d holds bad node %v (prio %d state %b)", l.prio, n.item, n.prio, n.state)
			}
			prev = i
			c++
		}
		if c != l.n || prev != l.tail {
			t.Fatalf("level %d count %d, linked %d", l.prio, l.n, c)
		}
		listed += c
	}
	for k := 1; k < len(q.heap); k++ {
		if (*delayHeap[T])(q).Less(k, (k-1)/2) {
			t.Fatalf("heap order broken at %d", k)
		}
	}
	if queued != q.queued || listed != q.queued || waiting != len(q.heap) || processing != q.inFlight {
		t.Fatalf("counts: queued %d/%d/%d waiting %d/%d processing %d/%d",
			queued, listed, q.queued, waiting, len(q.heap), processing, q.inFlight)
	}
}
