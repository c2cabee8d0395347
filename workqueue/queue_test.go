package workqueue

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBasic: many producers and consumers, every item is processed.
func TestBasic(t *testing.T) {
	tests := []struct {
		name      string
		producers int
		consumers int
	}{
		{"one each", 1, 1},
		{"many producers", 50, 1},
		{"many consumers", 1, 10},
		{"many of both", 50, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := New[int]()
			var producers sync.WaitGroup
			for p := range tc.producers {
				producers.Go(func() {
					for j := range 50 {
						q.Add(p*100 + j)
						time.Sleep(time.Microsecond)
					}
				})
			}
			var seen sync.Map
			var count atomic.Int64
			var consumers sync.WaitGroup
			for range tc.consumers {
				consumers.Go(func() {
					for {
						item, quit := q.Get()
						if quit {
							return
						}
						if _, dup := seen.LoadOrStore(item, true); !dup {
							count.Add(1)
						}
						q.Done(item)
					}
				})
			}
			producers.Wait()
			q.ShutDownWithDrain()
			consumers.Wait()
			assert.EqualValues(t, tc.producers*50, count.Load())
			assert.Equal(t, 0, q.Len())
		})
	}
}

// TestAddWhileProcessing: an item added while being processed runs once
// more after Done, and never on two workers at once.
func TestAddWhileProcessing(t *testing.T) {
	q := New[int]()
	var holding sync.Map
	var runs [10]atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				item, quit := q.Get()
				if quit {
					return
				}
				if _, busy := holding.LoadOrStore(item, true); busy {
					t.Errorf("item %d held by two workers", item)
				}
				if runs[item].Add(1) == 1 {
					q.Add(item) // once more while processing
				}
				holding.Delete(item)
				q.Done(item)
			}
		})
	}
	for i := range 10 {
		q.Add(i)
	}
	require.Eventually(t, func() bool {
		for i := range runs {
			if runs[i].Load() < 2 {
				return false
			}
		}
		return q.Len() == 0 && q.NumProcessing() == 0
	}, 5*time.Second, time.Millisecond)
	q.ShutDown()
	wg.Wait()
	for i := range runs {
		assert.EqualValues(t, 2, runs[i].Load(), "item %d", i)
	}
}

func TestLen(t *testing.T) {
	q := New[string]()
	q.Add("foo")
	assert.Equal(t, 1, q.Len())
	q.Add("bar")
	assert.Equal(t, 2, q.Len())
	q.Add("foo") // collapses
	assert.Equal(t, 2, q.Len())
	item, _ := q.Get()
	assert.Equal(t, 1, q.Len(), "in-flight items are not in Len")
	q.Add(item) // dirty while processing: not in Len either
	assert.Equal(t, 1, q.Len())
	q.Done(item)
	assert.Equal(t, 2, q.Len())
}

// TestReinsert: an item re-added while processing comes back after Done.
func TestReinsert(t *testing.T) {
	q := New[string]()
	q.Add("foo")
	i, _ := q.Get()
	require.Equal(t, "foo", i)
	q.Add(i)
	q.Done(i)
	i, quit := q.Get()
	assert.Equal(t, "foo", i)
	assert.False(t, quit)
	q.Done(i)
	assert.Equal(t, 0, q.Len())
}

// TestCollapse: adds of a queued item collapse into one.
func TestCollapse(t *testing.T) {
	q := New[string]()
	q.Add("bar")
	q.Add("bar")
	require.Equal(t, 1, q.Len())
	i, _ := q.Get()
	assert.Equal(t, "bar", i)
	q.Done(i)
	assert.Equal(t, 0, q.Len())
	q.ShutDown()
	_, quit := q.Get()
	assert.True(t, quit)
}

// TestCollapseWhileProcessing: many adds while processing give one rerun.
func TestCollapseWhileProcessing(t *testing.T) {
	q := New[string]()
	q.Add("foo")
	i, _ := q.Get()
	for range 5 {
		q.Add("foo")
	}
	assert.Equal(t, 0, q.Len())
	q.Done(i)
	assert.Equal(t, 1, q.Len())
	i, _ = q.Get()
	assert.Equal(t, "foo", i)
	q.Done(i)
	assert.Equal(t, 0, q.Len())
	assert.Equal(t, 0, q.NumProcessing())
}

func TestQueueDrainageUsingShutDownWithDrain(t *testing.T) {
	q := New[string]()
	q.Add("foo")
	q.Add("bar")
	first, _ := q.Get()
	second, _ := q.Get()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		q.ShutDownWithDrain()
	}()
	// Wait until the shutdown started, then check it still waits.
	require.Eventually(t, q.ShuttingDown, time.Second, time.Millisecond)
	select {
	case <-finished:
		t.Fatal("drain returned with items in flight")
	case <-time.After(20 * time.Millisecond):
	}
	q.Done(first)
	select {
	case <-finished:
		t.Fatal("drain returned with one item in flight")
	case <-time.After(20 * time.Millisecond):
	}
	q.Done(second)
	<-finished
}

func TestNoQueueDrainageUsingShutDown(t *testing.T) {
	q := New[string]()
	q.Add("foo")
	q.Add("bar")
	q.Get()
	q.Get()
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.ShutDown()
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("ShutDown waited for in-flight items")
	}
}

// TestForceQueueShutdownUsingShutDown: ShutDown during a drain ends it.
func TestForceQueueShutdownUsingShutDown(t *testing.T) {
	q := New[string]()
	q.Add("foo")
	q.Get()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		q.ShutDownWithDrain()
	}()
	require.Eventually(t, q.ShuttingDown, time.Second, time.Millisecond)
	q.ShutDown()
	select {
	case <-finished:
	case <-time.After(time.Second):
		t.Fatal("ShutDown did not end the drain")
	}
}

// TestQueueDrainageUsingShutDownWithDrainWithDirtyItem: an item added while
// processing is still handed out during the drain, and the drain waits for it.
func TestQueueDrainageUsingShutDownWithDrainWithDirtyItem(t *testing.T) {
	q := New[string]()
	q.Add("foo")
	got, _ := q.Get()
	q.Add("foo")
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		q.ShutDownWithDrain()
	}()
	require.Eventually(t, q.ShuttingDown, time.Second, time.Millisecond)
	q.Done(got)
	again, quit := q.Get()
	require.False(t, quit, "dirty item must be drained")
	assert.Equal(t, "foo", again)
	select {
	case <-finished:
		t.Fatal("drain returned before the re-run finished")
	case <-time.After(20 * time.Millisecond):
	}
	q.Done(again)
	<-finished
}

// TestGarbageCollection: the queue keeps no reference to a finished item.
func TestGarbageCollection(t *testing.T) {
	type big struct{ data []byte }
	q := New[*big]()
	collected := make(chan struct{})
	func() {
		obj := &big{data: make([]byte, 1<<10)}
		runtime.AddCleanup(obj, func(ch chan struct{}) { close(ch) }, collected)
		q.Add(obj)
		got, _ := q.Get()
		q.Done(got)
	}()
	require.Eventually(t, func() bool {
		runtime.GC()
		select {
		case <-collected:
			return true
		default:
			return false
		}
	}, 5*time.Second, 10*time.Millisecond)
	runtime.KeepAlive(q)
}

// TestGetAfterShutdown: Get drains after shutdown; Add after it is ignored.
func TestGetAfterShutdown(t *testing.T) {
	for _, drain := range []bool{false, true} {
		t.Run(fmt.Sprintf("drain=%v", drain), func(t *testing.T) {
			q := New[string]()
			q.Add("a")
			q.Add("b")
			if drain {
				go q.ShutDownWithDrain()
				require.Eventually(t, q.ShuttingDown, time.Second, time.Millisecond)
			} else {
				q.ShutDown()
			}
			q.Add("c")
			a, quit := q.Get()
			require.False(t, quit)
			b, quit := q.Get()
			require.False(t, quit)
			assert.Equal(t, []string{"a", "b"}, []string{a, b})
			_, quit = q.Get()
			assert.True(t, quit)
			q.Done(a)
			q.Done(b)
			q.ShutDown()
		})
	}
}

// TestGetUnblocksOnShutDown: a blocked Get returns when the queue shuts down.
func TestGetUnblocksOnShutDown(t *testing.T) {
	q := New[int]()
	res := make(chan bool)
	go func() {
		_, quit := q.Get()
		res <- quit
	}()
	time.Sleep(5 * time.Millisecond)
	q.ShutDown()
	assert.True(t, <-res)
}

// TestNoMetricsProvider: a named queue with a nil provider records nothing.
func TestNoMetricsProvider(t *testing.T) {
	q := New[int](WithMetricsProvider(nil), WithName("x"))
	q.Add(1)
	v, _ := q.Get()
	q.Done(v)
	assert.Equal(t, 1, v)
	q.ShutDown()
	q.ShutDown() // twice is fine
	q.ShutDownWithDrain()
}

func TestZeroValueQueue(t *testing.T) {
	tests := []struct {
		name string
		use  func(q *Queue[string])
	}{
		{"add get done", func(q *Queue[string]) {
			q.Add("a")
			item, quit := q.Get()
			assert.Equal(t, "a", item)
			assert.False(t, quit)
			q.Done(item)
		}},
		{"delayed", func(q *Queue[string]) {
			q.AddAfter("a", time.Hour)
			assert.Equal(t, 1, q.NumWaiting())
		}},
		{"shutdown only", func(q *Queue[string]) {}},
		{"len only", func(q *Queue[string]) { assert.Equal(t, 0, q.Len()) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var q Queue[string]
			tc.use(&q)
			q.ShutDown()
			_, quit := q.Get()
			assert.True(t, quit)
		})
	}
}
