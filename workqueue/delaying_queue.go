package workqueue

import (
	"math"
	"time"

	"k8s.io/utils/clock"
)

// DelayingInterface is Interface plus delayed adds: client-go's
// TypedDelayingInterface.
type DelayingInterface[T comparable] interface {
	Interface[T]
	AddAfter(item T, duration time.Duration)
}

const maxTime = int64(math.MaxInt64)

// idleSleep is how long the delay loop sleeps when nothing waits. Any
// AddAfter wakes it earlier, so this only bounds idle timer churn.
const idleSleep = time.Hour

// clockSlack is how far the clock may move while the delay loop sets its
// timer before the loop measures again; a deadline may fire this late.
const clockSlack = time.Millisecond

// NewDelaying returns a queue for delayed adds. Every Queue supports
// AddAfter, so this is New under the name client-go users look for. The
// delay stage is a heap under the queue's lock plus one timer goroutine,
// started on the first delayed add: AddAfter never blocks and never starts
// a goroutine per item.
func NewDelaying[T comparable](opts ...Option) *Queue[T] {
	return New[T](opts...)
}

// AddAfter adds item once duration has passed, at DefaultPriority. A
// duration of zero or less adds it now. If item already waits, the earlier
// deadline wins; if it is already ready, nothing changes. Every call counts
// as a retry in the metrics, as in client-go.
func (q *Queue[T]) AddAfter(item T, duration time.Duration) {
	q.lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	if q.m != nil {
		q.m.retries.Inc()
	}
	q.addAfterLocked(item, duration, DefaultPriority, false)
}

// Reschedule sets item's deadline to duration from now even if that is
// later than a pending one, or even if the item is ready and not yet handed
// out (client-go#131). An item being processed keeps running and is queued
// again at the new deadline. An existing item keeps its priority; a new one
// gets the default priority.
func (q *Queue[T]) Reschedule(item T, duration time.Duration) {
	q.lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	if q.m != nil {
		q.m.retries.Inc()
	}
	q.addAfterLocked(item, duration, DefaultPriority, true)
}

// NumWaiting returns how many items wait for an AddAfter deadline. They are
// not in Len, as in client-go, but they are not invisible either.
func (q *Queue[T]) NumWaiting() int {
	q.lock()
	defer q.mu.Unlock()
	return len(q.heap)
}

// addAfterLocked schedules item at priority p after d. With replace, the
// new deadline overrides any pending one (Reschedule).
func (q *Queue[T]) addAfterLocked(item T, d time.Duration, p int32, replace bool) {
	if d <= 0 && !replace {
		q.addLocked(item, p)
		return
	}
	now := q.now()
	at := now + int64(d)
	if at < now { // overflow: a practically infinite delay
		at = maxTime - 1
	}
	i, n := q.s.find(item)
	if n == nil {
		if d <= 0 {
			q.addLocked(item, p)
			return
		}
		var ok bool
		if i, n, ok = q.s.insert(item); !ok {
			return
		}
		n.prio = p
		n.t1 = at
		q.heapPush(i, n)
		return
	}
	if replace {
		q.reschedule(i, n, at, d <= 0)
		return
	}
	switch {
	case n.state&stWaiting != 0:
		n.prio = max(n.prio, p)
		if at < n.t1 {
			n.t1 = at
			q.heapFix(n)
		}
	case n.state&stQueued != 0:
		// Already ready, which beats any deadline; only a higher priority
		// changes anything, exactly as for Add.
		if p > n.prio {
			q.unlinkReady(i, n)
			n.prio = p
			q.pushReady(i, n)
		}
	case n.state&stDirty != 0:
		// Processing and due again at Done: sooner than any deadline.
		n.prio = max(n.prio, p)
	default: // processing only: this is a fresh schedule for the next run
		n.prio = p
		n.t1 = at
		q.heapPush(i, n)
	}
}

// reschedule replaces the deadline of an existing item.
func (q *Queue[T]) reschedule(i int32, n *node[T], at int64, now bool) {
	switch {
	case n.state&stProcessing != 0:
		if n.state&stWaiting != 0 {
			q.heapRemove(n)
		}
		if now {
			if n.state&stDirty == 0 {
				n.state |= stDirty
				q.enterDirty(n)
			}
			return
		}
		if n.state&stDirty != 0 {
			n.state &^= stDirty
			if q.m != nil {
				q.m.depth.Dec()
			}
		}
		n.t1 = at
		q.heapPush(i, n)
	case n.state&stWaiting != 0:
		if now {
			q.heapRemove(n)
			q.markReady(i, n)
			return
		}
		n.t1 = at
		q.heapFix(n)
	default: // queued
		if now {
			return
		}
		q.unlinkReady(i, n)
		if q.m != nil {
			q.m.depth.Dec()
		}
		n.t1 = at
		q.heapPush(i, n)
	}
}

// releaseDue moves every item whose deadline has passed to the ready set.
func (q *Queue[T]) releaseDue(now int64) {
	for len(q.heap) > 0 {
		i := q.heap[0]
		n := q.s.at(i)
		if n.t1 > now {
			return
		}
		q.heapRemove(n)
		// t1 keeps the deadline: the item became ready then, which is what
		// ageing and the latency metric want.
		at := n.t1
		if n.state&stProcessing != 0 {
			n.state |= stDirty
			q.enterDirty(n)
			n.t1 = at
			continue
		}
		q.enterDirty(n)
		n.t1 = at
		q.pushReady(i, n)
		q.notify()
	}
}

// dropWaiting empties the delay heap at shutdown, as client-go does.
func (q *Queue[T]) dropWaiting() {
	for len(q.heap) > 0 {
		i := q.heap[len(q.heap)-1]
		n := q.s.at(i)
		q.heapRemove(n)
		if n.state == 0 {
			q.s.release(i, n)
		}
	}
}

// kickLoop makes sure the loop wakes by deadline at.
func (q *Queue[T]) kickLoop(at int64) {
	if !q.loopStarted {
		q.startLoop()
	}
	if at < q.sleepUntil {
		q.sleepUntil = at
		select {
		case q.wakeCh <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// startLoop starts the queue's single goroutine. Called with mu held or
// during construction, never after shutdown.
func (q *Queue[T]) startLoop() {
	q.loopStarted = true
	// The timers are made here, not in the goroutine, so a fake clock sees
	// them as soon as the call that needed them returns.
	timer := q.clock.NewTimer(idleSleep)
	var ticker clock.Ticker
	if q.m != nil {
		ticker = q.clock.NewTicker(unfinishedRefresh)
	}
	q.wg.Add(1)
	go q.loop(timer, ticker)
}

// stopLoop stops the goroutine and waits for it to exit, so no goroutine of
// the queue outlives ShutDown.
func (q *Queue[T]) stopLoop() {
	q.stopOnce.Do(func() {
		q.lock() // a zero Queue shut down before any use has no channel yet
		ch := q.stopCh
		q.mu.Unlock()
		close(ch)
	})
	q.wg.Wait()
}

// loop releases due items at their deadlines and, with metrics on, refreshes
// the in-flight gauges. One timer is reused for the whole life of the queue.
func (q *Queue[T]) loop(timer clock.Timer, ticker clock.Ticker) {
	defer q.wg.Done()
	defer timer.Stop()
	var tick <-chan time.Time
	if ticker != nil {
		defer ticker.Stop()
		tick = ticker.C()
	}
	for {
		q.lock()
		if q.shuttingDown {
			q.mu.Unlock()
			return
		}
		now := q.now()
		q.releaseDue(now)
		wait := idleSleep
		q.sleepUntil = maxTime
		if len(q.heap) > 0 {
			q.sleepUntil = q.s.at(q.heap[0]).t1
			wait = time.Duration(q.sleepUntil - now)
		}
		q.mu.Unlock()
		timer.Stop()
		timer.Reset(wait)
		// The wait was measured from now. If the clock moved on before the
		// timer was set (a fake clock stepped by a test, or a long
		// preemption), the timer would fire late by that much, so measure
		// again instead of sleeping.
		if q.now()-now > int64(clockSlack) {
			continue
		}
		select {
		case <-q.stopCh:
			return
		case <-q.wakeCh:
		case <-timer.C():
		case <-tick:
			q.updateUnfinished()
		}
	}
}

// Deadline reports when a waiting item becomes ready, and false if the item
// does not wait for a deadline.
func (q *Queue[T]) Deadline(item T) (time.Time, bool) {
	q.lock()
	defer q.mu.Unlock()
	_, n := q.s.find(item)
	if n == nil || n.state&stWaiting == 0 {
		return time.Time{}, false
	}
	return q.epoch.Add(time.Duration(n.t1)), true
}
