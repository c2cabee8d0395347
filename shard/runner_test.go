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
		lw, err := e.ListWatch(podListWatch(cs), ByKey(KeyUID))
		if err != nil {
			return nil, err
		}
		owners := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
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

// An owner the previous epoch was writing for is not synced until that
// epoch's cancelled writes have settled; any other goes to the member's
// Guard at once.
func TestFenceWaitsForTheLastEpochsWrites(t *testing.T) {
	cs := fake.NewClientset()
	m, err := NewMember(cs.CoordinationV1(), "ns", "ring", "a")
	require.NoError(t, err)
	r := NewRunner(m, func(context.Context, *Epoch) (*Work, error) { return nil, nil })
	owners := cache.NewSharedIndexInformer(podListWatch(cs), &corev1.Pod{}, 0, cache.Indexers{})
	for _, name := range []string{"written", "idle"} {
		require.NoError(t, owners.GetIndexer().Add(testPod(name, "")))
	}
	var last syncLog
	stop := time.Now()
	last.begin("ns/written")
	last.begin("ns/long-ago")
	last.end("ns/long-ago", stop.Add(-time.Hour))
	e := &Epoch{Held: FullRanges(), r: r, settling: last.settling(stop, time.Minute),
		work: &Work{Owners: owners, OwnerHash: ByKey(KeyUID).Hash}}
	ctx := context.Background()

	_, _, retry, ok := e.Fence(ctx, "ns/written")
	require.False(t, ok, "an owner the last epoch was writing for synced before its writes settled")
	require.InDelta(t, time.Minute, retry, float64(time.Second), "retry once the writes settled")

	// The member holds nothing (it never ran), so its Guard refuses the
	// idle owner, and nobody wants it: no retry. What matters is that the
	// settling did not hold it back.
	_, _, retry, ok = e.Fence(ctx, "ns/idle")
	require.False(t, ok)
	require.Zero(t, retry, "an owner with no write in flight waited for the last epoch's writes")
	require.Equal(t, uint64(1), r.Stats().FencedSyncs)

	e.settling.until = time.Now().Add(-time.Second)
	_, _, retry, ok = e.Fence(ctx, "ns/written")
	require.False(t, ok)
	require.Zero(t, retry, "an owner waited after the last epoch's writes settled")
}

// The owners an epoch leaves to settle: those with a sync running when it
// stopped, and those whose last sync ended within the margin before.
func TestSyncLogSettling(t *testing.T) {
	var l syncLog
	stop := time.Now()
	l.begin("running")
	l.begin("recent")
	l.end("recent", stop.Add(-time.Second))
	l.begin("old")
	l.end("old", stop.Add(-time.Minute))
	l.begin("twice")
	l.begin("twice")
	l.end("twice", stop.Add(-time.Minute))
	s := l.settling(stop, 2*time.Second)
	require.Equal(t, map[string]bool{"running": true, "recent": true, "twice": true}, s.owners)
	_, held := s.holds("old", stop)
	require.False(t, held)
	wait, held := s.holds("recent", stop.Add(time.Second))
	require.True(t, held)
	require.Equal(t, time.Second, wait)
	_, held = s.holds("recent", stop.Add(2*time.Second))
	require.False(t, held)
}
