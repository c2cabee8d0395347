package workqueue

import (
	"context"
	"fmt"
	"k8s.io/utils/ptr"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	testingclock "k8s.io/utils/clock/testing"
)

// The model: a plain description of what the queue must do, step by step.
type modelItem struct {
	queued, waiting, processing, dirty bool
	prio                               int
	seq                                int   // FIFO position while queued
	deadline                           int64 // ns, while waiting
}

type model struct {
	items    map[int]*modelItem
	seq      int
	now      int64
	shutdown bool
	requeues map[int]int
}

func (m *model) item(k int) *modelItem {
	it := m.items[k]
	if it == nil {
		it = &modelItem{}
		m.items[k] = it
	}
	return it
}

func (m *model) gc(k int) {
	if it := m.items[k]; it != nil && !it.queued && !it.waiting && !it.processing {
		delete(m.items, k)
	}
}

func (m *model) enqueue(it *modelItem) {
	it.queued = true
	m.seq++
	it.seq = m.seq
}

func (m *model) add(k, prio int) {
	if m.shutdown {
		return
	}
	it := m.item(k)
	switch {
	case it.queued:
		if prio > it.prio {
			it.prio = prio
			m.enqueue(it)
		}
	case it.processing:
		if it.dirty {
			it.prio = max(it.prio, prio)
			return
		}
		if it.waiting {
			it.waiting = false
			prio = max(prio, it.prio)
		}
		it.prio, it.dirty = prio, true
	case it.waiting:
		it.waiting = false
		it.prio = max(it.prio, prio)
		m.enqueue(it)
	default:
		it.prio = prio
		m.enqueue(it)
	}
}

func (m *model) addAfter(k int, d time.Duration, prio int) {
	if m.shutdown {
		return
	}
	if d <= 0 {
		m.add(k, prio)
		return
	}
	at := m.now + int64(d)
	it := m.item(k)
	switch {
	case it.waiting:
		it.prio = max(it.prio, prio)
		it.deadline = min(it.deadline, at)
	case it.queued:
		if prio > it.prio {
			it.prio = prio
			m.enqueue(it)
		}
	case it.dirty:
		it.prio = max(it.prio, prio)
	case it.processing:
		it.prio, it.waiting, it.deadline = prio, true, at
	default:
		it.prio, it.waiting, it.deadline = prio, true, at
	}
}

func (m *model) step(d time.Duration) {
	m.now += int64(d)
	// Release in deadline order (deadlines are unique by construction).
	for {
		best, bestAt := -1, int64(0)
		for k, it := range m.items {
			if it.waiting && it.deadline <= m.now && (best < 0 || it.deadline < bestAt) {
				best, bestAt = k, it.deadline
			}
		}
		if best < 0 {
			return
		}
		it := m.items[best]
		it.waiting = false
		if it.processing {
			it.dirty = true
		} else {
			m.enqueue(it)
		}
	}
}

func (m *model) get() (int, int, bool) {
	best := -1
	for k, it := range m.items {
		if !it.queued {
			continue
		}
		b := m.items[best]
		if best < 0 || it.prio > b.prio || (it.prio == b.prio && it.seq < b.seq) {
			best = k
		}
	}
	if best < 0 {
		return 0, 0, false
	}
	it := m.items[best]
	it.queued, it.processing = false, true
	return best, it.prio, true
}

func (m *model) done(k int) {
	it := m.items[k]
	if it == nil || !it.processing {
		return
	}
	it.processing = false
	if it.dirty {
		it.dirty = false
		m.enqueue(it)
	}
	m.gc(k)
}

func (m *model) shutDown() {
	m.shutdown = true
	for k, it := range m.items {
		it.waiting = false
		m.gc(k)
	}
}

func (m *model) counts() (queued, waiting, processing int) {
	for _, it := range m.items {
		if it.queued {
			queued++
		}
		if it.waiting {
			waiting++
		}
		if it.processing {
			processing++
		}
	}
	return
}

// offsetLimiter adds a distinct sub-millisecond offset to every delay, so
// no two deadlines in the model test tie.
type offsetLimiter struct {
	RateLimiter[int]
	calls int
}

const limiterOffset = 500 * time.Microsecond

func (l *offsetLimiter) When(item int) time.Duration {
	l.calls++
	return l.RateLimiter.When(item) + limiterOffset + time.Duration(l.calls)
}

// runModel drives the queue and the model with the same operations, decoded
// from a byte string, and compares them after every step.
func runModel(t *testing.T, ops []byte) {
	c := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
	q := NewRateLimiting[int](&offsetLimiter{RateLimiter: NewItemExponentialFailureRateLimiter[int](time.Millisecond, 50*time.Millisecond)},
		WithClock(c), WithAgeing(0))
	calls := 0
	defer q.ShutDown()
	m := &model{items: map[int]*modelItem{}, requeues: map[int]int{}}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	// release makes due items ready now, as the delay loop would.
	release := func() {
		q.mu.Lock()
		q.releaseDue(q.now())
		q.mu.Unlock()
	}
	for n := 0; n+2 < len(ops); n += 3 {
		kind, a, b := ops[n]%9, int(ops[n+1]%8), int(ops[n+2])
		prio := b%5 - 2
		// Unique sub-millisecond offsets keep deadlines distinct, so the
		// release order is fully determined.
		delay := time.Duration(b%4)*time.Millisecond + time.Duration(n+1)
		switch kind {
		case 0, 1:
			q.AddWithOpts(AddOpts{Priority: ptr.To(prio)}, a)
			m.add(a, prio)
		case 2:
			q.AddWithOpts(AddOpts{After: delay, Priority: ptr.To(prio)}, a)
			m.addAfter(a, delay, prio)
		case 3, 4:
			item, gotPrio, quit := q.Queue.get(cancelled)
			want, wantPrio, ok := m.get()
			require.Equal(t, !ok, quit, "op %d: Get shutdown flag", n)
			if ok {
				require.Equal(t, want, item, "op %d: Get item", n)
				require.Equal(t, wantPrio, gotPrio, "op %d: Get priority", n)
			}
		case 5:
			q.Done(a)
			m.done(a)
		case 6:
			step := time.Duration(b%3) * time.Millisecond
			c.Step(step)
			release()
			m.step(step)
		case 7:
			if b%2 == 0 {
				q.Forget(a)
				m.requeues[a] = 0
			} else if !m.shutdown {
				// AddRateLimited: delay 1ms·2^n capped at 50ms; the model
				// mirrors the formula with its own counter.
				calls++
				d := min(time.Millisecond<<m.requeues[a], 50*time.Millisecond) + limiterOffset + time.Duration(calls)
				q.AddRateLimited(a)
				m.requeues[a]++
				m.addAfter(a, d, DefaultPriority)
			}
			require.Equal(t, m.requeues[a], q.NumRequeues(a))
		case 8:
			if b%16 == 0 {
				q.ShutDown()
				m.shutDown()
			}
		}
		release()
		q.Queue.checkInvariants(t)
		queued, waiting, processing := m.counts()
		require.Equal(t, queued, q.Len(), "op %d: Len", n)
		require.Equal(t, waiting, q.NumWaiting(), "op %d: NumWaiting", n)
		require.Equal(t, processing, q.NumProcessing(), "op %d: NumProcessing", n)
		require.Equal(t, m.shutdown, q.ShuttingDown())
	}
}

func TestModelRandomized(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0x5eed))
			ops := make([]byte, 3*400)
			for i := range ops {
				ops[i] = byte(r.Uint32())
			}
			runModel(t, ops)
		})
	}
}

func FuzzQueueModel(f *testing.F) {
	f.Add([]byte{0, 1, 0, 3, 0, 0, 5, 1, 0})                            // add, get, done
	f.Add([]byte{2, 1, 7, 0, 1, 0, 3, 0, 0, 6, 0, 2})                   // #126027: add-after then add
	f.Add([]byte{0, 1, 0, 3, 0, 0, 0, 1, 0, 5, 1, 0, 5, 1, 0, 3, 0, 0}) // re-add while processing, double done
	f.Add([]byte{0, 1, 0, 0, 2, 4, 8, 0, 16, 3, 0, 0, 3, 0, 0})         // shutdown drains
	f.Add([]byte{7, 3, 1, 7, 3, 1, 6, 0, 2, 6, 0, 2, 3, 0, 0, 7, 3, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 3*2000 {
			ops = ops[:3*2000]
		}
		runModel(t, ops)
	})
}

// TestConcurrentRandomized drives random Add/AddAfter/Get/Done/Forget from
// several goroutines, checks after every step that no item is held by two
// workers and the structure is consistent, then shuts down with a drain and
// checks that every item ran after its last Add.
func TestConcurrentRandomized(t *testing.T) {
	const keys = 32
	q := NewRateLimiting[int](NewItemExponentialFailureRateLimiter[int](time.Microsecond, time.Millisecond))
	var (
		clockSeq  atomic.Int64
		mu        sync.Mutex
		held      = map[int]bool{}
		lastAdd   [keys]atomic.Int64
		lastStart [keys]atomic.Int64
	)
	ctx, cancel := context.WithCancel(context.Background())
	var producers, workers sync.WaitGroup
	for p := range 3 {
		producers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(p), 1))
			for range 3000 {
				k := r.IntN(keys)
				switch r.IntN(4) {
				case 0, 1:
					s := clockSeq.Add(1)
					q.AddWithOpts(AddOpts{Priority: ptr.To(r.IntN(3) - 1)}, k)
					for { // record the latest add
						old := lastAdd[k].Load()
						if s <= old || lastAdd[k].CompareAndSwap(old, s) {
							break
						}
					}
				case 2:
					q.AddAfter(k, time.Duration(r.IntN(200))*time.Microsecond)
				case 3:
					q.Forget(k)
				}
				if r.IntN(50) == 0 {
					q.checkInvariants(t)
				}
			}
		})
	}
	for w := range 4 {
		workers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 2))
			for {
				// Half of the workers use GetContext, which the cancel below
				// interrupts; the queue must stay consistent.
				var item int
				var quit bool
				if w%2 == 0 {
					item, quit = q.GetContext(ctx)
					if quit && ctx.Err() != nil && !q.ShuttingDown() {
						item, quit = q.Get()
					}
				} else {
					item, quit = q.Get()
				}
				if quit {
					return
				}
				lastStart[item].Store(clockSeq.Add(1))
				mu.Lock()
				if held[item] {
					t.Errorf("item %d handed to two workers", item)
				}
				held[item] = true
				mu.Unlock()
				if r.IntN(10) == 0 {
					q.AddRateLimited(item)
				}
				mu.Lock()
				delete(held, item)
				mu.Unlock()
				if r.IntN(20) == 0 {
					q.Done(keys + item) // unpaired Done: must be ignored
				}
				q.Done(item)
			}
		})
	}
	time.Sleep(5 * time.Millisecond)
	cancel()
	producers.Wait()
	q.ShutDownWithDrain()
	workers.Wait()
	q.checkInvariants(t)
	assert.Equal(t, 0, q.Len())
	assert.Equal(t, 0, q.NumProcessing())
	for k := range keys {
		if a := lastAdd[k].Load(); a > 0 {
			assert.Greater(t, lastStart[k].Load(), a, "item %d did not run after its last Add", k)
		}
	}
}
