package workqueue

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Interface is the basic work queue: client-go's TypedInterface.
type Interface[T comparable] interface {
	Add(item T)
	Len() int
	Get() (item T, shutdown bool)
	Done(item T)
	ShutDown()
	ShutDownWithDrain()
	ShuttingDown() bool
}

// Queue is a work queue with client-go's dirty/processing semantics plus
// delays, priorities and ageing. All state, including the delay heap, lives
// under one mutex, so an Add can see and cancel a pending delay.
//
// The zero value is an unnamed queue on the real clock with default ageing,
// ready to use; New and NewDelaying take options.
type Queue[T comparable] struct {
	mu        sync.Mutex
	getCond   sync.Cond // workers blocked in Get
	drainCond sync.Cond // ShutDownWithDrain callers

	s        store[T]
	levels   []level
	nonEmpty int // non-empty levels
	queued   int // items in the ready levels (Len)
	inFlight int // items handed out and not Done
	heap     []int32
	procs    []proc // in-flight items, kept only when metrics are on

	// waiters counts Get callers blocked on getCond; wakes counts Signals
	// sent to them that have not been consumed yet. Add signals only when
	// there are more ready items than pending wakes, so a burst does not
	// wake every worker for one item.
	waiters, wakes int

	shuttingDown bool
	drain        bool

	limiter RateLimiter[T] // nil unless built by NewRateLimiting

	clock  clock.WithTicker
	epoch  time.Time
	ageing time.Duration
	stamp  bool // record ready times (metrics on, or ageing across levels)
	// stampSince is when stamping began; older ready times are unknown and
	// read as this instant.
	stampSince int64
	m          *queueMetrics

	// The delay loop: one goroutine, started on first need, stopped and
	// waited for by ShutDown.
	loopStarted bool
	sleepUntil  int64 // deadline the loop sleeps towards; maxTime if none
	wakeCh      chan struct{}
	stopCh      chan struct{}
	stopOnce    sync.Once
	wg          sync.WaitGroup
}

// New returns a queue. It never starts a goroutine unless it is named with a
// metrics provider (the in-flight gauges are refreshed periodically) or an
// item is added with a delay.
func New[T comparable](opts ...Option) *Queue[T] {
	c := newConfig(opts)
	q := &Queue[T]{}
	q.init(c)
	if q.m != nil {
		q.startLoop()
	}
	return q
}

// init sets the queue up; New calls it, and lock calls it for a zero Queue.
func (q *Queue[T]) init(c config) {
	q.clock = c.clock
	q.ageing = c.ageing
	q.m = newQueueMetrics(c.name, c.provider)
	q.sleepUntil = maxTime
	q.wakeCh = make(chan struct{}, 1)
	q.stopCh = make(chan struct{})
	q.epoch = q.clock.Now()
	q.getCond.L = &q.mu
	q.drainCond.L = &q.mu
	q.s.init()
	q.levels = []level{{prio: DefaultPriority, head: nilIdx, tail: nilIdx}}
	q.stamp = q.m != nil
}

// lock takes the queue's mutex, first setting up a zero-value Queue.
func (q *Queue[T]) lock() {
	q.mu.Lock()
	if q.stopCh == nil {
		q.init(newConfig(nil))
	}
}

// now is the queue's monotonic time in nanoseconds since construction.
func (q *Queue[T]) now() int64 { return int64(q.clock.Since(q.epoch)) }

// Add marks item as needing processing at DefaultPriority. Re-adding a
// queued item changes nothing; re-adding an item that waits for an AddAfter
// deadline makes it ready now, so it runs once (kubernetes#126027). Adds
// after shutdown are ignored.
func (q *Queue[T]) Add(item T) {
	q.lock()
	if !q.shuttingDown {
		q.addLocked(item, DefaultPriority)
	}
	q.mu.Unlock()
}

func (q *Queue[T]) addLocked(item T, p int32) {
	i, n := q.s.find(item)
	if n == nil {
		var ok bool
		if i, n, ok = q.s.insert(item); !ok {
			return
		}
		n.prio = p
		q.markReady(i, n)
		return
	}
	switch {
	case n.state&stQueued != 0:
		if p > n.prio {
			// FIFO within the new level, as controller-runtime does.
			q.unlinkReady(i, n)
			n.prio = p
			q.pushReady(i, n)
		}
	case n.state&stProcessing != 0:
		if n.state&stDirty != 0 {
			n.prio = max(n.prio, p)
			return
		}
		if n.state&stWaiting != 0 {
			q.heapRemove(n)
			p = max(n.prio, p)
		}
		n.prio = p
		n.state |= stDirty
		q.enterDirty(n)
	default: // waiting only
		q.heapRemove(n)
		n.prio = max(n.prio, p)
		q.markReady(i, n)
	}
}

// markReady queues a node that is not being processed.
func (q *Queue[T]) markReady(i int32, n *node[T]) {
	q.enterDirty(n)
	q.pushReady(i, n)
	q.notify()
}

// enterDirty stamps the ready time and counts the add, as client-go's depth
// and adds metrics do when an item becomes dirty.
func (q *Queue[T]) enterDirty(n *node[T]) {
	if q.stamp {
		n.t1 = q.now()
	}
	if q.m != nil {
		q.m.depth.Inc()
		q.m.adds.Inc()
	}
}

// notify wakes one blocked Get when a ready item has no wake-up pending.
func (q *Queue[T]) notify() {
	if q.waiters > q.wakes && q.queued > q.wakes {
		q.wakes++
		q.getCond.Signal()
	}
}

// Len returns the number of items ready to be handed out, like client-go.
// Items being processed and items waiting for a delay are not counted; see
// NumProcessing and NumWaiting.
func (q *Queue[T]) Len() int {
	q.lock()
	defer q.mu.Unlock()
	return q.queued
}

// NumProcessing returns the number of items handed out and not yet Done.
func (q *Queue[T]) NumProcessing() int {
	q.lock()
	defer q.mu.Unlock()
	return q.inFlight
}

// Get blocks until an item is ready and hands it out; the caller must call
// Done with it. After shutdown Get keeps returning queued items until none
// is left, then returns shutdown=true.
func (q *Queue[T]) Get() (item T, shutdown bool) {
	item, _, shutdown = q.get(context.Background())
	return item, shutdown
}

// GetWithPriority is Get that also returns the priority the item was queued
// with, so a worker can requeue it at the same priority.
func (q *Queue[T]) GetWithPriority() (item T, priority int, shutdown bool) {
	return q.get(context.Background())
}

// GetContext is Get that also gives up when ctx is done, so workers can stop
// without shutting the queue down (kubernetes#91800). A ready item is handed
// out even if ctx is already done, which makes a done ctx a non-blocking
// Get. It returns shutdown=true when the queue is shut down and empty or when
// ctx is done; ctx.Err() tells the two apart.
func (q *Queue[T]) GetContext(ctx context.Context) (item T, shutdown bool) {
	item, _, shutdown = q.get(ctx)
	return item, shutdown
}

func (q *Queue[T]) get(ctx context.Context) (item T, priority int, shutdown bool) {
	q.lock()
	var stop func() bool
	for q.queued == 0 && !q.shuttingDown {
		if ctx.Done() != nil {
			if ctx.Err() != nil {
				break
			}
			if stop == nil {
				// Wake every waiter when ctx ends; the others just re-check.
				stop = context.AfterFunc(ctx, q.wakeAll)
			}
		}
		q.waiters++
		q.getCond.Wait()
		q.waiters--
		if q.wakes > 0 {
			q.wakes--
		}
	}
	if stop != nil {
		stop()
	}
	if q.queued == 0 {
		q.mu.Unlock()
		return item, 0, true
	}
	i, n := q.popReady()
	n.state = stProcessing
	q.inFlight++
	if q.m != nil {
		now := q.now()
		q.m.depth.Dec()
		q.m.latency.Observe(seconds(now - n.t1))
		n.prev = int32(len(q.procs))
		q.procs = append(q.procs, proc{idx: i, start: now})
	}
	item, priority = n.item, int(n.prio)
	q.mu.Unlock()
	return item, priority, false
}

func (q *Queue[T]) wakeAll() {
	q.lock()
	q.wakes = 0
	q.getCond.Broadcast()
	q.drainCond.Broadcast()
	q.mu.Unlock()
}

// Done marks item as processed. If it was added again meanwhile it is queued
// once more, at the tail of its priority. A Done for an item that is not
// being processed is ignored instead of duplicating it (kubernetes#79934).
func (q *Queue[T]) Done(item T) {
	q.lock()
	i, n := q.s.find(item)
	if n == nil || n.state&stProcessing == 0 {
		q.mu.Unlock()
		return
	}
	n.state &^= stProcessing
	q.inFlight--
	if q.m != nil {
		q.m.workDuration.Observe(seconds(q.now() - q.procs[n.prev].start))
		last := q.procs[len(q.procs)-1]
		q.procs[n.prev] = last
		q.s.at(last.idx).prev = n.prev
		q.procs = q.procs[:len(q.procs)-1]
	}
	switch {
	case n.state&stDirty != 0:
		n.state &^= stDirty
		q.pushReady(i, n)
		q.notify()
	case n.state == 0:
		q.s.release(i, n)
	}
	if q.drain && q.inFlight == 0 && q.queued == 0 {
		q.drainCond.Broadcast()
	}
	q.mu.Unlock()
}

// ShutDown makes Add ignore new items and Get return shutdown=true once the
// ready items are handed out. Items waiting for a delay are dropped. It
// returns after the queue's own goroutine has exited (kubernetes#134323); it
// does not wait for workers.
func (q *Queue[T]) ShutDown() {
	q.lock()
	q.drain = false
	q.shutdownLocked()
	q.mu.Unlock()
	q.stopLoop()
}

// ShutDownWithDrain is ShutDown that then waits until every ready item has
// been handed out and every in-flight item is Done (kubernetes#141079). It
// blocks while workers hold items; see ShutDownWithDrainContext for a bound.
func (q *Queue[T]) ShutDownWithDrain() {
	_ = q.ShutDownWithDrainContext(context.Background())
}

// ShutDownWithDrainContext is ShutDownWithDrain that gives up when ctx is
// done and returns its error. A concurrent ShutDown also ends the wait.
func (q *Queue[T]) ShutDownWithDrainContext(ctx context.Context) error {
	q.lock()
	q.drain = true
	q.shutdownLocked()
	q.mu.Unlock()
	q.stopLoop()

	q.lock()
	defer q.mu.Unlock()
	// Wake the waiters when ctx ends, so the loop sees ctx.Err().
	stop := context.AfterFunc(ctx, q.wakeAll)
	defer stop()
	for q.drain && (q.queued > 0 || q.inFlight > 0) {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("workqueue: drain interrupted with %d queued and %d in flight: %w", q.queued, q.inFlight, err)
		}
		q.drainCond.Wait()
	}
	return nil
}

func (q *Queue[T]) shutdownLocked() {
	if !q.shuttingDown {
		q.shuttingDown = true
		q.dropWaiting()
	}
	q.wakes = 0
	q.getCond.Broadcast()
	q.drainCond.Broadcast()
}

// ShuttingDown reports whether ShutDown or ShutDownWithDrain was called.
func (q *Queue[T]) ShuttingDown() bool {
	q.lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}
