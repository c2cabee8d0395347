package shard

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

// runnerLog is what the Work of a runner's epochs saw.
type runnerLog struct {
	mu     sync.Mutex
	epochs []*Epoch
	first  [][]string // the keys QueueFirst got, per epoch
	queued []string
	drains int
}

func (l *runnerLog) firstOf(i int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i >= len(l.first) {
		return nil
	}
	return slices.Sorted(slices.Values(l.first[i]))
}

func (l *runnerLog) epochCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.epochs)
}

// podWork builds each epoch's Work over the fake clientset's pods, taken as
// the owners and sharded by UID, with a sweep that finds "ns/behind" behind.
func podWork(cs *fake.Clientset, log *runnerLog) func(context.Context, *Epoch) (*Work, error) {
	return func(_ context.Context, e *Epoch) (*Work, error) {
		owners, err := e.Informer(podListWatch(cs), &corev1.Pod{}, ByKey(KeyUID))
		if err != nil {
			return nil, err
		}
		log.mu.Lock()
		i := len(log.epochs)
		log.epochs = append(log.epochs, e)
		log.first = append(log.first, nil)
		log.mu.Unlock()
		drained := make(chan struct{})
		var once sync.Once
		return &Work{
			Informers: []cache.SharedIndexInformer{owners},
			Owners:    owners, OwnerHash: ByKey(KeyUID).Hash,
			Run: func(ctx context.Context) {
				select {
				case <-ctx.Done():
				case <-drained:
				}
			},
			Drain: func() {
				once.Do(func() {
					log.mu.Lock()
					log.drains++
					log.mu.Unlock()
					close(drained)
				})
			},
			Queue: func(key string) {
				log.mu.Lock()
				log.queued = append(log.queued, key)
				log.mu.Unlock()
			},
			QueueFirst: func(key string) {
				log.mu.Lock()
				log.first[i] = append(log.first[i], key)
				log.mu.Unlock()
			},
			Behind:        func(obj any) bool { return obj.(*corev1.Pod).Name == "behind" },
			SweepInterval: 10 * time.Millisecond,
		}, nil
	}
}

// ownersIn returns the keys of the pods whose UID hashes into rs, sorted.
func ownersIn(pods []*corev1.Pod, rs Ranges) []string {
	var keys []string
	for _, p := range pods {
		if rs.Contains(Hash(string(p.UID))) {
			keys = append(keys, p.Namespace+"/"+p.Name)
		}
	}
	slices.Sort(keys)
	return keys
}

// A runner runs an epoch per share: alone it works on every owner, queued
// first; when a second member joins it restarts over the smaller share;
// when that member leaves it restarts over the whole space again and queues
// first exactly the owners of the ranges it gained. A drain drains the
// Work, the member leaves the ring, and goleak (TestMain) finds no goroutine
// left behind.
func TestRunnerRunsAnEpochPerShare(t *testing.T) {
	cs := fake.NewClientset()
	ctx := context.Background()
	var pods []*corev1.Pod
	for i := range 40 {
		name := fmt.Sprint("p", i)
		if i == 0 {
			name = "behind"
		}
		p, err := cs.CoreV1().Pods("ns").Create(ctx, testPod(name, ""), metav1.CreateOptions{})
		require.NoError(t, err)
		pods = append(pods, p)
	}
	timing := []Option{WithLeaseDuration(time.Second), WithRenewInterval(20 * time.Millisecond),
		WithSafetyMargin(50 * time.Millisecond), WithWriteTimeout(100 * time.Millisecond)}
	join := func(id string, log *runnerLog) (*Runner, func(drain bool) error) {
		m, err := NewMember(cs.CoordinationV1(), "ns", "ring", id, timing...)
		require.NoError(t, err)
		r := NewRunner(m, podWork(cs, log))
		rctx, cancel := context.WithCancel(ctx)
		drain := make(chan struct{})
		done := make(chan error, 1)
		go func() { done <- r.Run(rctx, drain) }()
		return r, func(graceful bool) error {
			if graceful {
				close(drain)
			} else {
				cancel()
			}
			err := <-done
			cancel()
			return err
		}
	}
	eventually := func(what string, cond func() bool) {
		t.Helper()
		require.Eventually(t, cond, 20*time.Second, 5*time.Millisecond, what)
	}

	var logA, logB runnerLog
	a, stopA := join("a", &logA)
	eventually("a to work on the whole space", func() bool {
		s := a.Stats()
		return a.Ready() == nil && len(s.Cached) == 1 && s.Cached[0] == len(pods)
	})
	all := ownersIn(pods, FullRanges())
	// The informer fills its cache before its handlers hear of the objects.
	eventually("a to queue every owner first", func() bool { return len(logA.firstOf(0)) == len(all) })
	require.Equal(t, all, logA.firstOf(0), "a new member's first epoch syncs every owner first")
	guarded, done, retry, ok := logA.epochs[0].Fence(ctx, "ns/p1")
	require.True(t, ok)
	require.Zero(t, retry)
	require.NoError(t, guarded.Err())
	done()
	_, _, _, ok = logA.epochs[0].Fence(ctx, "ns/not-cached")
	require.False(t, ok, "an owner outside the epoch's cache was synced")
	eventually("the sweep to queue the owner that is behind", func() bool {
		logA.mu.Lock()
		defer logA.mu.Unlock()
		return slices.Contains(logA.queued, "ns/behind")
	})

	b, stopB := join("b", &logB)
	eventually("the shares to split", func() bool {
		ha, hb := a.Member().Held(), b.Member().Held()
		sa, sb := a.Stats(), b.Stats()
		return !ha.Empty() && !hb.Empty() && ha.Fraction()+hb.Fraction() > 0.9999 &&
			len(sa.Cached) == 1 && len(sb.Cached) == 1 && sa.Cached[0]+sb.Cached[0] == len(pods)
	})
	require.False(t, a.Member().Held().Overlaps(b.Member().Held()))
	require.GreaterOrEqual(t, a.Stats().Epochs, uint64(2), "a restarts over its smaller share")
	require.Positive(t, a.Stats().Handovers)
	epochsBefore := logA.epochCount()
	heldBefore := a.Member().Held()

	require.NoError(t, stopB(false))
	eventually("a to hold everything again", func() bool {
		return a.Member().Held().Equal(FullRanges()) && a.Ready() == nil && logA.epochCount() > epochsBefore
	})
	last := logA.epochCount() - 1
	logA.mu.Lock()
	gained := logA.epochs[last].Gained
	logA.mu.Unlock()
	require.Equal(t, FullRanges().Subtract(heldBefore), gained, "the ranges b gave up")
	eventually("a to queue first the owners it gained", func() bool { return len(logA.firstOf(last)) == len(ownersIn(pods, gained)) })
	require.Equal(t, ownersIn(pods, gained), logA.firstOf(last))

	require.NoError(t, stopA(true))
	require.Equal(t, 1, logA.drains, "a drain drains the Work")
	require.Nil(t, a.Stats().Cached, "no epoch after Run returned")
	leases, err := cs.CoordinationV1().Leases("ns").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Empty(t, leases.Items, "members delete their Leases when they leave")
}

// A build function's error ends Run, after the member left the ring.
func TestRunnerReturnsBuildErrors(t *testing.T) {
	cs := fake.NewClientset()
	m, err := NewMember(cs.CoordinationV1(), "ns", "ring", "a", WithRenewInterval(20*time.Millisecond))
	require.NoError(t, err)
	r := NewRunner(m, func(context.Context, *Epoch) (*Work, error) { return nil, fmt.Errorf("no informers") })
	err = r.Run(context.Background(), nil)
	require.ErrorContains(t, err, "no informers")
	leases, lerr := cs.CoordinationV1().Leases("ns").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, lerr)
	require.Empty(t, leases.Items)
	require.Panics(t, func() { NewRunner(m, nil) })
}

// epochTimes records, per epoch of a runner, when its informer first
// listed and when its Work stopped.
type epochTimes struct {
	mu      sync.Mutex
	epochs  []*Epoch
	listed  []time.Time
	stopped []time.Time
}

func (l *epochTimes) epoch(i int) (e *Epoch, listed, stopped time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i >= len(l.epochs) {
		return nil, time.Time{}, time.Time{}
	}
	return l.epochs[i], l.listed[i], l.stopped[i]
}

// timedWork builds each epoch's Work over the fake clientset's pods, taken
// as the owners, and records its times in log.
func timedWork(cs *fake.Clientset, log *epochTimes) func(context.Context, *Epoch) (*Work, error) {
	return func(_ context.Context, e *Epoch) (*Work, error) {
		log.mu.Lock()
		i := len(log.epochs)
		log.epochs = append(log.epochs, e)
		log.listed = append(log.listed, time.Time{})
		log.stopped = append(log.stopped, time.Time{})
		log.mu.Unlock()
		inner := podListWatch(cs)
		list := inner.ListWithContextFunc
		inner.ListWithContextFunc = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			log.mu.Lock()
			if log.listed[i].IsZero() {
				log.listed[i] = time.Now()
			}
			log.mu.Unlock()
			return list(ctx, o)
		}
		lw, err := e.ListWatch(inner, ByKey(KeyUID))
		if err != nil {
			return nil, err
		}
		owners := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
		return &Work{
			Informers: []cache.SharedIndexInformer{owners},
			Owners:    owners, OwnerHash: ByKey(KeyUID).Hash,
			Run: func(ctx context.Context) {
				<-ctx.Done()
				log.mu.Lock()
				log.stopped[i] = time.Now()
				log.mu.Unlock()
			},
			Queue: func(string) {},
		}, nil
	}
}

// A new epoch lists its share only once the writes the last one left in
// flight have settled: a safety margin after the stop when a sync was
// running then. A create cancelled by the stop may still be stored, and a
// list before it would count the owner's children without it. After an
// epoch that was not writing, the next lists at once.
func TestRunnerListsOnceTheLastEpochsWritesSettled(t *testing.T) {
	const margin = 2 * time.Second
	for _, writing := range []bool{true, false} {
		t.Run(fmt.Sprintf("writing=%v", writing), func(t *testing.T) {
			cs := fake.NewClientset()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for i := range 20 {
				_, err := cs.CoreV1().Pods("ns").Create(ctx, testPod(fmt.Sprint("p", i), ""), metav1.CreateOptions{})
				require.NoError(t, err)
			}
			timing := []Option{WithLeaseDuration(3 * time.Second), WithRenewInterval(20 * time.Millisecond),
				WithSafetyMargin(margin), WithWriteTimeout(100 * time.Millisecond)}
			a, err := NewMember(cs.CoordinationV1(), "ns", "ring", "a", timing...)
			require.NoError(t, err)
			var log epochTimes
			r := NewRunner(a, timedWork(cs, &log))
			runDone := make(chan error, 1)
			go func() { runDone <- r.Run(ctx, nil) }()
			defer func() {
				cancel()
				require.NoError(t, <-runDone)
			}()
			require.Eventually(t, func() bool {
				e, listed, _ := log.epoch(0)
				return e != nil && !listed.IsZero() && r.Ready() == nil
			}, 20*time.Second, 5*time.Millisecond, "a's first epoch")
			finish := func() {}
			if writing {
				e, _, _ := log.epoch(0)
				_, done, _, ok := e.Fence(ctx, "ns/p0")
				require.True(t, ok)
				finish = done
			}

			b, err := NewMember(cs.CoordinationV1(), "ns", "ring", "b", timing...)
			require.NoError(t, err)
			bctx, leave := context.WithCancel(ctx)
			bDone := make(chan error, 1)
			go func() { bDone <- b.Run(bctx) }()
			defer func() {
				leave()
				require.NoError(t, <-bDone)
			}()
			require.Eventually(t, func() bool {
				_, listed, _ := log.epoch(1)
				return !listed.IsZero()
			}, 20*time.Second, 5*time.Millisecond, "a's epoch over the share b left it")
			finish()
			_, _, stopped := log.epoch(0)
			_, listed, _ := log.epoch(1)
			if writing {
				require.GreaterOrEqual(t, listed.Sub(stopped), margin, "the next epoch listed before the writes of the last had settled")
			} else {
				require.Less(t, listed.Sub(stopped), margin/2, "the next epoch waited though the last wrote nothing")
			}
		})
	}
}

// An epoch's writes have settled a margin after its stop while a sync runs,
// a margin after the last sync's end otherwise, and at once if none ran.
func TestSyncLogSettledAt(t *testing.T) {
	var l syncLog
	stop := time.Now()
	require.True(t, l.settledAt(stop, time.Second).IsZero(), "no sync ran")
	l.begin()
	l.begin()
	l.end(stop.Add(-time.Minute))
	require.Equal(t, stop.Add(time.Second), l.settledAt(stop, time.Second), "a sync still runs")
	l.end(stop.Add(-500 * time.Millisecond))
	require.Equal(t, stop.Add(500*time.Millisecond), l.settledAt(stop, time.Second), "the last sync ended before the stop")
}
