package workqueue

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	cgworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/ctrlkit/ctrlkit/internal/benchpair"
)

// Every benchmark runs ctrlkit and client-go side by side as sub-benchmarks
// named impl=ctrlkit and impl=clientgo, so benchstat can pair them, in the
// order benchpair gives the round. Keys are
// ~25-character strings built before the timer starts.

var (
	keysOnce sync.Once
	keyPool  []string
)

const poolSize = 1 << 20

func keys() []string {
	keysOnce.Do(func() {
		keyPool = make([]string, poolSize+200_000)
		for i := range keyPool {
			keyPool[i] = fmt.Sprintf("namespace-%04d/object-%08d", i%977, i)
		}
	})
	return keyPool
}

// basicQueue is the part of both queues the benchmarks drive.
type basicQueue interface {
	Add(string)
	Get() (string, bool)
	Done(string)
	ShutDown()
	ShutDownWithDrain()
}

type delayingQueue interface {
	basicQueue
	AddAfter(string, time.Duration)
}

type impl struct {
	name     string
	plain    func() basicQueue
	named    func(MetricsProvider) basicQueue
	delaying func() delayingQueue
}

var impls = []impl{
	{
		name:     "ctrlkit",
		plain:    func() basicQueue { return New[string]() },
		named:    func(p MetricsProvider) basicQueue { return New[string](WithName("bench"), WithMetricsProvider(p)) },
		delaying: func() delayingQueue { return NewDelaying[string]() },
	},
	{
		name:  "clientgo",
		plain: func() basicQueue { return cgworkqueue.NewTyped[string]() },
		named: func(p MetricsProvider) basicQueue {
			return cgworkqueue.NewTypedWithConfig(cgworkqueue.TypedQueueConfig[string]{Name: "bench", MetricsProvider: p})
		},
		delaying: func() delayingQueue { return cgworkqueue.NewTypedDelayingQueue[string]() },
	},
}

func forEachImpl(b *testing.B, fn func(b *testing.B, im impl)) {
	keys()
	for _, im := range benchpair.Order(b, impls[0], impls[1]) {
		b.Run("impl="+im.name, func(b *testing.B) {
			b.ReportAllocs()
			fn(b, im)
		})
	}
}

func cycle(b *testing.B, q basicQueue) {
	ks := keys()[:1024]
	b.ResetTimer()
	for i := range b.N {
		q.Add(ks[i&1023])
		item, _ := q.Get()
		q.Done(item)
	}
	b.StopTimer()
	q.ShutDown()
}

// Serial Add+Get+Done of distinct keys on a warm unnamed queue.
func BenchmarkSerialCycle(b *testing.B) {
	forEachImpl(b, func(b *testing.B, im impl) { cycle(b, im.plain()) })
}

// The same cycle on a named queue whose provider's metrics do nothing: the
// cost of the metrics machinery itself.
func BenchmarkSerialCycleNoopMetrics(b *testing.B) {
	forEachImpl(b, func(b *testing.B, im impl) { cycle(b, im.named(noopProvider{})) })
}

// Add of a key that is already queued (a dedup hit).
func BenchmarkAddQueuedKey(b *testing.B) {
	forEachImpl(b, func(b *testing.B, im impl) {
		q := im.plain()
		ks := keys()[:1000]
		for _, k := range ks {
			q.Add(k)
		}
		b.ResetTimer()
		for i := range b.N {
			q.Add(ks[i%1000])
		}
		b.StopTimer()
		q.ShutDown()
	})
}

// One producer and four workers, distinct keys; ns/op is per item, from the
// first Add to the drained queue.
func BenchmarkThroughputP1W4(b *testing.B) {
	forEachImpl(b, func(b *testing.B, im impl) {
		q := im.plain()
		ks := keys()[:poolSize]
		var wg sync.WaitGroup
		b.ResetTimer()
		for range 4 {
			wg.Go(func() {
				for {
					item, quit := q.Get()
					if quit {
						return
					}
					q.Done(item)
				}
			})
		}
		for i := range b.N {
			q.Add(ks[i&(poolSize-1)])
		}
		q.ShutDownWithDrain()
		wg.Wait()
	})
}

// heapBytes returns the live heap after a full collection.
func heapBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// One million distinct keys queued: the cost of a cycle at that depth, and
// the queue's bytes per queued item (the key strings are prebuilt and not
// counted).
func BenchmarkDeepQueue1M(b *testing.B) {
	const depth = 1_000_000
	forEachImpl(b, func(b *testing.B, im impl) {
		ks := keys()
		before := heapBytes()
		q := im.plain()
		for _, k := range ks[:depth] {
			q.Add(k)
		}
		perItem := float64(heapBytes()-before) / depth
		b.ResetTimer()
		for range b.N {
			item, _ := q.Get()
			q.Done(item)
			q.Add(item)
		}
		b.StopTimer()
		// Reported after the loop: ResetTimer discards earlier metrics.
		b.ReportMetric(perItem, "B/queued-item")
		q.ShutDown()
	})
}

// AddAfter of new keys with 100,000 items already waiting, far in the
// future; also the bytes per waiting item.
func BenchmarkAddAfter100kWaiting(b *testing.B) {
	const waiting = 100_000
	forEachImpl(b, func(b *testing.B, im impl) {
		ks := keys()
		before := heapBytes()
		q := im.delaying()
		for i, k := range ks[:waiting] {
			q.AddAfter(k, time.Hour+time.Duration(i))
		}
		time.Sleep(50 * time.Millisecond) // let client-go's loop take them in
		perItem := float64(heapBytes()-before) / waiting
		extra := ks[waiting:]
		b.ResetTimer()
		for i := range b.N {
			q.AddAfter(extra[i%len(extra)], time.Hour+time.Duration(i))
		}
		b.StopTimer()
		b.ReportMetric(perItem, "B/waiting-item")
		q.ShutDown()
	})
}

// controller-runtime's shape: add 1000 ints, then get and finish them all.
func BenchmarkAddGetDone1000(b *testing.B) {
	type intQueue interface {
		Add(int)
		Get() (int, bool)
		Done(int)
		ShutDown()
	}
	type maker struct {
		name string
		new  func() intQueue
	}
	for _, mk := range benchpair.Order(b,
		maker{"ctrlkit", func() intQueue { return New[int]() }},
		maker{"clientgo", func() intQueue { return cgworkqueue.NewTyped[int]() }},
	) {
		b.Run("impl="+mk.name, func(b *testing.B) {
			b.ReportAllocs()
			q := mk.new()
			for range b.N {
				for i := range 1000 {
					q.Add(i)
				}
				for range 1000 {
					item, _ := q.Get()
					q.Done(item)
				}
			}
			q.ShutDown()
		})
	}
}

// AddRateLimited with client-go's default controller limiter.
func BenchmarkAddRateLimited(b *testing.B) {
	type rlQueue interface {
		AddRateLimited(string)
		ShutDown()
	}
	type maker struct {
		name string
		new  func() rlQueue
	}
	for _, mk := range benchpair.Order(b,
		maker{"ctrlkit", func() rlQueue { return NewRateLimiting[string](DefaultControllerRateLimiter[string]()) }},
		maker{"clientgo", func() rlQueue {
			return cgworkqueue.NewTypedRateLimitingQueue(cgworkqueue.DefaultTypedControllerRateLimiter[string]())
		}},
	) {
		b.Run("impl="+mk.name, func(b *testing.B) {
			b.ReportAllocs()
			ks := keys()[:1024]
			q := mk.new()
			b.ResetTimer()
			for i := range b.N {
				q.AddRateLimited(ks[i&1023])
			}
			b.StopTimer()
			q.ShutDown()
		})
	}
}

type noopProvider struct{}

func (noopProvider) NewDepthMetric(string) GaugeMetric                         { return noop{} }
func (noopProvider) NewAddsMetric(string) CounterMetric                        { return noop{} }
func (noopProvider) NewLatencyMetric(string) HistogramMetric                   { return noop{} }
func (noopProvider) NewWorkDurationMetric(string) HistogramMetric              { return noop{} }
func (noopProvider) NewUnfinishedWorkSecondsMetric(string) SettableGaugeMetric { return noop{} }
func (noopProvider) NewLongestRunningProcessorSecondsMetric(string) SettableGaugeMetric {
	return noop{}
}
func (noopProvider) NewRetriesMetric(string) CounterMetric { return noop{} }
