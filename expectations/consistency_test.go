package expectations

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
)

var (
	podsGR     = schema.GroupResource{Resource: "pods"}
	servicesGR = schema.GroupResource{Resource: "services"}
	jobsGR     = schema.GroupResource{Group: "batch", Resource: "jobs"}
)

// Every client-go store plugs in as is.
var (
	_ SyncedResourceVersioner = cache.NewStore(cache.MetaNamespaceKeyFunc)
	_ SyncedResourceVersioner = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
)

// fakeStore reports a settable resource version and may run a hook first.
type fakeStore struct {
	rv    atomic.Value // string
	calls atomic.Int64
	hook  func()
}

func newFakeStore(rv string) *fakeStore {
	s := &fakeStore{}
	s.rv.Store(rv)
	return s
}

func (s *fakeStore) set(rv string) { s.rv.Store(rv) }

func (s *fakeStore) LastStoreSyncResourceVersion() string {
	s.calls.Add(1)
	if s.hook != nil {
		s.hook()
	}
	return s.rv.Load().(string)
}

func newTestGuard(t *testing.T, opts ...ConsistencyOption) (*ConsistencyGuard, *clocktesting.FakeClock, *logSink) {
	t.Helper()
	clk := clocktesting.NewFakeClock(upstreamTestTime)
	logs := &logSink{}
	all := append([]ConsistencyOption{WithClock(clk), WithLogger(logs.logger())}, opts...)
	return NewConsistencyGuard(all...), clk, logs
}

func TestConsistencyGuardDecisions(t *testing.T) {
	const key = "default/web@uid-1"
	type write struct {
		gr schema.GroupResource
		rv string
	}
	tests := []struct {
		name      string
		writes    []write
		podsRV    string
		svcRV     string
		wantStale *ConsistencyError // nil: ready
		wantLen   int               // records left after EnsureReady
	}{
		{name: "no record", podsRV: "5", svcRV: "5"},
		{
			name: "store behind", writes: []write{{podsGR, "10"}}, podsRV: "9", svcRV: "100",
			wantStale: &ConsistencyError{OwnerKey: key, GroupResource: podsGR, WroteRV: "10", ReadRV: "9"}, wantLen: 1,
		},
		{name: "store equal drops the record", writes: []write{{podsGR, "10"}}, podsRV: "10", svcRV: "1"},
		{name: "store ahead", writes: []write{{podsGR, "10"}}, podsRV: "11", svcRV: "1"},
		{
			name: "compared as numbers, not text", writes: []write{{podsGR, "100"}}, podsRV: "99", svcRV: "1",
			wantStale: &ConsistencyError{OwnerKey: key, GroupResource: podsGR, WroteRV: "100", ReadRV: "99"}, wantLen: 1,
		},
		{
			name: "older write does not lower the mark", writes: []write{{podsGR, "10"}, {podsGR, "8"}}, podsRV: "9", svcRV: "1",
			wantStale: &ConsistencyError{OwnerKey: key, GroupResource: podsGR, WroteRV: "10", ReadRV: "9"}, wantLen: 1,
		},
		{name: "newer write raises the mark", writes: []write{{podsGR, "8"}, {podsGR, "10"}}, podsRV: "10", svcRV: "1"},
		{
			name: "second resource behind", writes: []write{{podsGR, "10"}, {servicesGR, "20"}}, podsRV: "10", svcRV: "19",
			wantStale: &ConsistencyError{OwnerKey: key, GroupResource: servicesGR, WroteRV: "20", ReadRV: "19"}, wantLen: 1,
		},
		{name: "store without support reports empty", writes: []write{{podsGR, "10"}}, podsRV: "", svcRV: "1"},
		{name: "unparsable store version never blocks", writes: []write{{podsGR, "10"}}, podsRV: "abc", svcRV: "1"},
		{name: "malformed writes are ignored", writes: []write{{podsGR, ""}, {podsGR, "abc"}, {podsGR, "0"}, {podsGR, "007"}, {podsGR, "-3"}}, podsRV: "1", svcRV: "1"},
		{name: "unregistered resource is ignored", writes: []write{{jobsGR, "10"}}, podsRV: "1", svcRV: "1"},
		{
			name: "malformed write keeps the valid mark", writes: []write{{podsGR, "10"}, {podsGR, "garbage"}}, podsRV: "9", svcRV: "1",
			wantStale: &ConsistencyError{OwnerKey: key, GroupResource: podsGR, WroteRV: "10", ReadRV: "9"}, wantLen: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pods, svcs := newFakeStore(tc.podsRV), newFakeStore(tc.svcRV)
			g, _, _ := newTestGuard(t, WithStore(podsGR, pods), WithStore(servicesGR, svcs))
			for _, w := range tc.writes {
				g.WroteAt(key, w.gr, w.rv)
			}
			err := g.EnsureReady(key)
			if tc.wantStale == nil {
				require.NoError(t, err)
			} else {
				var ce *ConsistencyError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, tc.wantStale, ce)
				assert.ErrorIs(t, err, ErrStaleCache)
				assert.Contains(t, err.Error(), tc.wantStale.WroteRV)
			}
			assert.Equal(t, tc.wantLen, g.Len())
			assert.Equal(t, err == nil, g.Ready(key), "Ready agrees with EnsureReady")
		})
	}
}

func TestConsistencyGuardCatchesUp(t *testing.T) {
	pods := newFakeStore("9")
	g, _, _ := newTestGuard(t, WithStores(map[schema.GroupResource]SyncedResourceVersioner{podsGR: pods}))
	key := OwnerKey("default", "web", "uid-1")
	g.WroteAt(key, podsGR, "12")
	for _, rv := range []string{"10", "11"} {
		pods.set(rv)
		require.ErrorIs(t, g.EnsureReady(key), ErrStaleCache, "at %s", rv)
	}
	pods.set("12")
	require.NoError(t, g.EnsureReady(key))
	assert.Zero(t, g.Len())
	calls := pods.calls.Load()
	require.NoError(t, g.EnsureReady(key))
	assert.Equal(t, calls, pods.calls.Load(), "a dropped record costs no store call")
}

func TestConsistencyGuardOwnerUID(t *testing.T) {
	pods := newFakeStore("5")
	g, _, _ := newTestGuard(t, WithStore(podsGR, pods))
	oldKey := OwnerKey("default", "web", "uid-1")
	newKey := OwnerKey("default", "web", "uid-2")
	plain := OwnerKey("default", "web", "")

	g.WroteAt(oldKey, podsGR, "10")
	assert.NoError(t, g.EnsureReady(newKey), "a re-created owner does not inherit (kubernetes#142142)")
	assert.ErrorIs(t, g.EnsureReady(oldKey), ErrStaleCache)
	assert.ErrorIs(t, g.EnsureReady(plain), ErrStaleCache, "a plain key sees any incarnation, as upstream")

	g.Clear(newKey)
	assert.Equal(t, 1, g.Len(), "Clear with another UID leaves the record")

	g.WroteAt(newKey, podsGR, "7")
	assert.Equal(t, 1, g.Len(), "one record per owner name")
	assert.NoError(t, g.EnsureReady(oldKey), "the new incarnation's write replaced the old record")
	assert.ErrorIs(t, g.EnsureReady(newKey), ErrStaleCache)

	g.Clear(plain)
	assert.Zero(t, g.Len(), "a plain key clears whatever the name holds")
	assert.NoError(t, g.EnsureReady(newKey))

	g.WroteAt(newKey, podsGR, "7")
	g.Clear(newKey)
	assert.Zero(t, g.Len())
}

func TestConsistencyGuardTTL(t *testing.T) {
	pods := newFakeStore("5")
	g, clk, logs := newTestGuard(t, WithStore(podsGR, pods), WithTTL(time.Minute))
	g.WroteAt("ns/a@u", podsGR, "10")

	clk.Step(time.Minute)
	require.ErrorIs(t, g.EnsureReady("ns/a@u"), ErrStaleCache, "expiry is strictly after the TTL")
	assert.Empty(t, logs.matching("TTL"))

	clk.Step(time.Nanosecond)
	require.NoError(t, g.EnsureReady("ns/a@u"), "the TTL breaks the circuit")
	assert.Zero(t, g.Len())
	lines := logs.matching("still behind")
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], `"wroteRV"="10"`)

	// A write re-arms the TTL.
	g.WroteAt("ns/a@u", podsGR, "10")
	clk.Step(40 * time.Second)
	g.WroteAt("ns/a@u", podsGR, "11")
	clk.Step(40 * time.Second)
	require.ErrorIs(t, g.EnsureReady("ns/a@u"), ErrStaleCache)

	// An expired record that had caught up is dropped silently.
	pods.set("11")
	clk.Step(time.Minute)
	require.NoError(t, g.EnsureReady("ns/a@u"))
	assert.Len(t, logs.matching("still behind"), 1)

	// A write over an expired record starts from scratch.
	pods.set("5")
	g.WroteAt("ns/b", podsGR, "50")
	clk.Step(2 * time.Minute)
	g.WroteAt("ns/b", podsGR, "6")
	err := g.EnsureReady("ns/b")
	var ce *ConsistencyError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "6", ce.WroteRV)
}

func TestConsistencyGuardEviction(t *testing.T) {
	pods := newFakeStore("1")
	g, clk, _ := newTestGuard(t, WithStore(podsGR, pods), WithTTL(time.Minute))
	const n = 100
	for i := range n {
		g.WroteAt(keyN(i), podsGR, "10")
	}
	require.Equal(t, n, g.Len())

	clk.Step(time.Minute + time.Nanosecond)
	g.WroteAt("ns/fresh", podsGR, "10")
	assert.Equal(t, n+1-maxEvictPerWrite, g.Len(), "one write evicts a bounded batch")
	for i := 0; g.Len() > 1 && i < n; i++ {
		g.WroteAt("ns/fresh", podsGR, "10")
	}
	assert.Equal(t, 1, g.Len(), "further writes finish the job")

	for i := range 10 {
		g.WroteAt(keyN(i), podsGR, "10")
	}
	clk.Step(30 * time.Second)
	g.WroteAt(keyN(0), podsGR, "11") // refreshed: moves to the young end
	clk.Step(31 * time.Second)
	assert.Equal(t, 10, g.EvictExpired(), "all but the refreshed record")
	assert.Equal(t, 1, g.Len())
	assert.ErrorIs(t, g.EnsureReady(keyN(0)), ErrStaleCache)
	assert.Zero(t, g.EvictExpired())
}

// A write that lands while EnsureReady asks the stores must survive. The
// hook also proves no lock is held while a store is called.
func TestConsistencyGuardWriteDuringCheck(t *testing.T) {
	pods := newFakeStore("10")
	g, _, _ := newTestGuard(t, WithStore(podsGR, pods))
	var once sync.Once
	pods.hook = func() { once.Do(func() { g.WroteAt("ns/a", podsGR, "20") }) }
	g.WroteAt("ns/a", podsGR, "10")

	require.NoError(t, g.EnsureReady("ns/a"), "the check saw version 10")
	assert.Equal(t, 1, g.Len(), "the concurrent write kept the record")
	assert.ErrorIs(t, g.EnsureReady("ns/a"), ErrStaleCache)
}

// client-go's own store, advanced by a bookmark as the reflector does.
func TestConsistencyGuardClientGoStore(t *testing.T) {
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	g, _, _ := newTestGuard(t, WithStore(podsGR, store))
	g.WroteAt("ns/a@u", podsGR, "42")
	store.Bookmark("41")
	if store.LastStoreSyncResourceVersion() == "" {
		// The AtomicFIFO gate is off in this environment: the guard must
		// then never block.
		require.NoError(t, g.EnsureReady("ns/a@u"))
		return
	}
	require.ErrorIs(t, g.EnsureReady("ns/a@u"), ErrStaleCache)
	store.Bookmark("42")
	require.NoError(t, g.EnsureReady("ns/a@u"))
}

func TestConsistencyGuardBadInput(t *testing.T) {
	t.Run("nil guard", func(t *testing.T) {
		var g *ConsistencyGuard
		assert.NotPanics(t, func() {
			g.WroteAt("ns/a", podsGR, "10")
			assert.NoError(t, g.EnsureReady("ns/a"))
			assert.True(t, g.Ready("ns/a"))
			g.Clear("ns/a")
			assert.Zero(t, g.Len())
			assert.Zero(t, g.EvictExpired())
			assert.Equal(t, "ConsistencyGuard(nil)", g.String())
		})
	})
	t.Run("zero value", func(t *testing.T) {
		var g ConsistencyGuard
		assert.NotPanics(t, func() {
			g.WroteAt("ns/a", podsGR, "10")
			assert.NoError(t, g.EnsureReady("ns/a"))
			g.Clear("ns/a")
			assert.Zero(t, g.Len())
			assert.Zero(t, g.EvictExpired())
			assert.Contains(t, g.String(), "ttl: 5m0s")
		})
	})
	t.Run("invalid options", func(t *testing.T) {
		var typedNil *fakeStore
		var nilOpt Option
		pods := newFakeStore("1")
		g := NewConsistencyGuard(nil, nilOpt, WithStore(podsGR, nil), WithStore(servicesGR, typedNil),
			WithStore(schema.GroupResource{Group: "apps"}, pods), WithStores(nil), WithTTL(-time.Second), WithClock(nil))
		assert.Empty(t, g.stores, "nil, typed-nil and nameless registrations are dropped")
		assert.NotPanics(t, func() {
			g.WroteAt("ns/a", servicesGR, "10")
			assert.NoError(t, g.EnsureReady("ns/a"))
		})
		assert.Zero(t, g.Len())
		assert.Equal(t, ExpectationsTimeout, g.timeout())
	})
	t.Run("last registration wins", func(t *testing.T) {
		first, second := newFakeStore("1"), newFakeStore("100")
		g, _, _ := newTestGuard(t, WithStore(podsGR, first), WithStore(podsGR, second))
		g.WroteAt("ns/a", podsGR, "50")
		assert.NoError(t, g.EnsureReady("ns/a"))
		assert.Zero(t, first.calls.Load())
	})
	t.Run("empty and odd keys", func(t *testing.T) {
		pods := newFakeStore("1")
		g, _, _ := newTestGuard(t, WithStore(podsGR, pods))
		g.WroteAt("", podsGR, "10")
		assert.Zero(t, g.Len(), "empty key ignored")
		assert.NoError(t, g.EnsureReady(""))
		g.Clear("")
		for _, k := range []string{"@", "a@", "@u", "x/y/z@u@v"} {
			assert.NotPanics(t, func() {
				g.WroteAt(k, podsGR, "10")
				assert.ErrorIs(t, g.EnsureReady(k), ErrStaleCache, k)
				g.Clear(k)
			}, k)
		}
		assert.Zero(t, g.Len())
	})
	t.Run("nil error value", func(t *testing.T) {
		var ce *ConsistencyError
		assert.Equal(t, "<nil>", ce.Error())
		assert.True(t, errors.Is(&ConsistencyError{}, ErrStaleCache))
		assert.False(t, errors.Is(&ConsistencyError{}, ErrNilExpectations))
	})
}

func TestConsistencyGuardConcurrent(t *testing.T) {
	pods, svcs := newFakeStore("1"), newFakeStore("1")
	g, clk, _ := newTestGuard(t, WithStore(podsGR, pods), WithStore(servicesGR, svcs), WithTTL(time.Minute))
	const workers, rounds, owners = 8, 300, 16
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				key := OwnerKey("ns", fmt.Sprintf("o-%d", (w+i)%owners), "u")
				rv := fmt.Sprint(i + 2)
				switch i % 6 {
				case 0, 1:
					g.WroteAt(key, podsGR, rv)
				case 2:
					g.WroteAt(key, servicesGR, rv)
				case 3:
					_ = g.EnsureReady(key)
				case 4:
					pods.set(rv)
					svcs.set(rv)
					_ = g.Ready(key)
				default:
					if i%30 == 5 {
						g.Clear(key)
						clk.Step(time.Second)
						g.EvictExpired()
					}
					_ = g.Len()
				}
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, g.Len(), owners, "one record per owner name")

	// Once the stores are past every write, every owner is ready and gone.
	pods.set("1000000")
	svcs.set("1000000")
	for o := range owners {
		require.NoError(t, g.EnsureReady(OwnerKey("ns", fmt.Sprintf("o-%d", o), "u")))
	}
	assert.Zero(t, g.Len())
	assertListConsistent(t, g)
}

// assertListConsistent checks that the expiry list and the map agree.
func assertListConsistent(t *testing.T, g *ConsistencyGuard) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	var prev *guardRecord
	for r := g.oldest; r != nil; r = r.next {
		require.Equal(t, prev, r.prev)
		require.Same(t, r, g.records[r.name])
		prev = r
		n++
	}
	require.Equal(t, prev, g.newest)
	require.Equal(t, len(g.records), n)
}

func TestConsistencyGuardListIntegrity(t *testing.T) {
	pods := newFakeStore("1")
	g, clk, _ := newTestGuard(t, WithStore(podsGR, pods), WithTTL(time.Minute))
	// A deterministic mix of every list operation.
	for i := range 500 {
		key := OwnerKey("ns", fmt.Sprintf("o-%d", i*7%23), types.UID(fmt.Sprintf("u%d", i%3)))
		switch i % 5 {
		case 0, 1:
			g.WroteAt(key, podsGR, fmt.Sprint(i+1))
		case 2:
			pods.set(fmt.Sprint(i))
			_ = g.EnsureReady(key)
		case 3:
			g.Clear(key)
		default:
			clk.Step(7 * time.Second)
		}
		assertListConsistent(t, g)
	}
}

// FuzzConsistencyGuard feeds arbitrary resource versions: nothing panics,
// and the guard blocks exactly when both versions are well formed and the
// write is newer.
func FuzzConsistencyGuard(f *testing.F) {
	for _, seed := range [][2]string{{"10", "9"}, {"9", "10"}, {"", ""}, {"0", "1"}, {"abc", "1"}, {"1", "abc"},
		{"100", "99"}, {"007", "6"}, {"18446744073709551616", "18446744073709551615"}, {"-1", "1"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, wrote, read string) {
		pods := newFakeStore(read)
		g := NewConsistencyGuard(WithStore(podsGR, pods))
		g.WroteAt("ns/a@u", podsGR, wrote)
		err := g.EnsureReady("ns/a@u")
		cmp, cmpErr := resourceversion.CompareResourceVersion(wrote, read)
		if cmpErr == nil && cmp > 0 {
			require.ErrorIs(t, err, ErrStaleCache)
		} else {
			require.NoError(t, err)
		}
	})
}
