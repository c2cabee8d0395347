package consistency

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
)

var (
	podsGR     = schema.GroupResource{Resource: "pods"}
	servicesGR = schema.GroupResource{Resource: "services"}
	jobsGR     = schema.GroupResource{Group: "batch", Resource: "jobs"}
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

// logSink collects formatted log lines.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (l *logSink) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, strings.TrimSpace(prefix+" "+args))
	}, funcr.Options{})
}

func (l *logSink) matching(substr string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return out
}

var testStart = time.Date(2009, time.November, 10, 23, 0, 0, 0, time.UTC)

func newTestGuard(t *testing.T, opts ...Option) (*Guard, *clocktesting.FakeClock, *logSink) {
	t.Helper()
	clk := clocktesting.NewFakeClock(testStart)
	logs := &logSink{}
	all := append([]Option{WithClock(clk), WithLogger(logs.logger())}, opts...)
	return NewGuard(all...), clk, logs
}

func TestGuardDecisions(t *testing.T) {
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
		wantStale *StaleCacheError // nil: ready
		wantLen   int              // records left after EnsureReady
	}{
		{name: "no record", podsRV: "5", svcRV: "5"},
		{
			name: "store behind", writes: []write{{podsGR, "10"}}, podsRV: "9", svcRV: "100",
			wantStale: &StaleCacheError{OwnerKey: key, GroupResource: podsGR, WroteRV: "10", ReadRV: "9"}, wantLen: 1,
		},
		{name: "store equal drops the record", writes: []write{{podsGR, "10"}}, podsRV: "10", svcRV: "1"},
		{name: "store ahead", writes: []write{{podsGR, "10"}}, podsRV: "11", svcRV: "1"},
		{
			name: "compared as numbers, not text", writes: []write{{podsGR, "100"}}, podsRV: "99", svcRV: "1",
			wantStale: &StaleCacheError{OwnerKey: key, GroupResource: podsGR, WroteRV: "100", ReadRV: "99"}, wantLen: 1,
		},
		{
			name: "older write does not lower the mark", writes: []write{{podsGR, "10"}, {podsGR, "8"}}, podsRV: "9", svcRV: "1",
			wantStale: &StaleCacheError{OwnerKey: key, GroupResource: podsGR, WroteRV: "10", ReadRV: "9"}, wantLen: 1,
		},
		{name: "newer write raises the mark", writes: []write{{podsGR, "8"}, {podsGR, "10"}}, podsRV: "10", svcRV: "1"},
		{
			name: "second resource behind", writes: []write{{podsGR, "10"}, {servicesGR, "20"}}, podsRV: "10", svcRV: "19",
			wantStale: &StaleCacheError{OwnerKey: key, GroupResource: servicesGR, WroteRV: "20", ReadRV: "19"}, wantLen: 1,
		},
		{name: "store without support reports empty", writes: []write{{podsGR, "10"}}, podsRV: "", svcRV: "1"},
		{name: "unparsable store version never blocks", writes: []write{{podsGR, "10"}}, podsRV: "abc", svcRV: "1"},
		{name: "malformed writes are ignored", writes: []write{{podsGR, ""}, {podsGR, "abc"}, {podsGR, "0"}, {podsGR, "007"}, {podsGR, "-3"}}, podsRV: "1", svcRV: "1"},
		{name: "unregistered resource is ignored", writes: []write{{jobsGR, "10"}}, podsRV: "1", svcRV: "1"},
		{
			name: "malformed write keeps the valid mark", writes: []write{{podsGR, "10"}, {podsGR, "garbage"}}, podsRV: "9", svcRV: "1",
			wantStale: &StaleCacheError{OwnerKey: key, GroupResource: podsGR, WroteRV: "10", ReadRV: "9"}, wantLen: 1,
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
				var se *StaleCacheError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, tc.wantStale, se)
				assert.ErrorIs(t, err, ErrStaleCache)
				assert.True(t, IsStaleCache(fmt.Errorf("syncing: %w", err)))
				assert.Contains(t, err.Error(), tc.wantStale.WroteRV)
			}
			assert.Equal(t, tc.wantLen, g.Len())
		})
	}
}

func TestGuardCatchesUp(t *testing.T) {
	pods := newFakeStore("9")
	g, _, _ := newTestGuard(t, WithStore(podsGR, pods))
	const key = "default/web@uid-1"
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

func TestGuardOwnerUID(t *testing.T) {
	pods := newFakeStore("5")
	g, _, _ := newTestGuard(t, WithStore(podsGR, pods))
	const oldKey, newKey, plain = "default/web@uid-1", "default/web@uid-2", "default/web"

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

func TestGuardTTL(t *testing.T) {
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
	var se *StaleCacheError
	require.ErrorAs(t, g.EnsureReady("ns/b"), &se)
	assert.Equal(t, "6", se.WroteRV)
}

// The zero time is an ordinary instant: a fake clock started there still
// ages records.
func TestGuardTTLFromZeroTime(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Time{})
	g := NewGuard(WithStore(podsGR, newFakeStore("1")), WithClock(clk), WithTTL(time.Minute), WithLogger(logr.Discard()))
	g.WroteAt("ns/a", podsGR, "10")
	require.ErrorIs(t, g.EnsureReady("ns/a"), ErrStaleCache)
	clk.Step(time.Minute + time.Nanosecond)
	require.NoError(t, g.EnsureReady("ns/a"))
}

func TestGuardNonPositiveTTLPanics(t *testing.T) {
	for _, ttl := range []time.Duration{0, -time.Second} {
		assert.PanicsWithValue(t, fmt.Sprintf("consistency: WithTTL: non-positive TTL %v", ttl), func() { WithTTL(ttl) })
	}
}

// Options follow the library convention: a value that can never be right
// panics at the option, in the caller's goroutine; a nil Option is ignored.
func TestGuardOptionConvention(t *testing.T) {
	assert.PanicsWithValue(t, "consistency: WithClock: nil clock; omit the option for the real clock",
		func() { WithClock(nil) })
	assert.PanicsWithValue(t, "consistency: WithStore: nil store for pods",
		func() { WithStore(podsGR, nil) })
	store := newFakeStore("1")
	var none Option
	g := NewGuard(nil, WithStore(podsGR, store), none)
	g.WroteAt("ns/a", podsGR, "5")
	assert.ErrorIs(t, g.EnsureReady("ns/a"), ErrStaleCache)
}

// Expired records of owners that are never synced again (deleted without a
// Clear) are evicted by later writes, so memory follows live owners.
func TestGuardEviction(t *testing.T) {
	g, clk, _ := newTestGuard(t, WithStore(podsGR, newFakeStore("1")), WithTTL(time.Minute))
	const n = 1000
	for i := range n {
		g.WroteAt(fmt.Sprintf("ns/old-%d", i), podsGR, "10")
	}
	require.Equal(t, n, g.Len())
	clk.Step(time.Minute + time.Nanosecond)
	for i := range n {
		g.WroteAt(fmt.Sprintf("ns/new-%d", i), podsGR, "10")
	}
	assert.Equal(t, n, g.Len(), "the expired records went, the live ones stayed")
}

// A write that lands while EnsureReady asks the stores must survive; the hook
// also proves no lock is held while a store is called.
func TestGuardWriteDuringCheck(t *testing.T) {
	pods := newFakeStore("10")
	g, _, _ := newTestGuard(t, WithStore(podsGR, pods))
	var once sync.Once
	pods.hook = func() { once.Do(func() { g.WroteAt("ns/a", podsGR, "20") }) }
	g.WroteAt("ns/a", podsGR, "10")

	require.NoError(t, g.EnsureReady("ns/a"), "the check saw version 10")
	assert.Equal(t, 1, g.Len(), "the concurrent write kept the record")
	assert.ErrorIs(t, g.EnsureReady("ns/a"), ErrStaleCache)
}

func TestGuardLastRegistrationWins(t *testing.T) {
	first, second := newFakeStore("1"), newFakeStore("100")
	g, _, _ := newTestGuard(t, WithStore(podsGR, first), WithStore(podsGR, second))
	g.WroteAt("ns/a", podsGR, "50")
	assert.NoError(t, g.EnsureReady("ns/a"))
	assert.Zero(t, first.calls.Load())
}

func TestGuardWithoutStoresIsInert(t *testing.T) {
	g := NewGuard()
	g.WroteAt("ns/a", podsGR, "10")
	assert.NoError(t, g.EnsureReady("ns/a"))
	assert.Zero(t, g.Len())
}

// bookmarkingStore is what a client-go v0.36+ store offers: the reflector
// advances it with Bookmark. Asserted rather than named, so the test compiles
// against every supported client-go.
type bookmarkingStore interface {
	SyncedResourceVersioner
	Bookmark(resourceVersion string)
}

// client-go's own store, advanced by a bookmark as the reflector does. Before
// v0.36 a client-go store cannot tell its version: the cores then register
// none (they assert SyncedResourceVersioner), and the guard over no store is
// inert, as TestGuardWithoutStoresIsInert pins.
func TestGuardClientGoStore(t *testing.T) {
	for name, s := range map[string]any{
		"store":   cache.NewStore(cache.MetaNamespaceKeyFunc),
		"indexer": cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}),
	} {
		t.Run(name, func(t *testing.T) {
			store, ok := s.(bookmarkingStore)
			if !ok {
				_, versioned := s.(SyncedResourceVersioner)
				assert.False(t, versioned, "a store that reports its version is advanced by Bookmark")
				return
			}
			testGuardClientGoStore(t, store)
		})
	}
}

func testGuardClientGoStore(t *testing.T, store bookmarkingStore) {
	g, _, _ := newTestGuard(t, WithStore(podsGR, store))
	g.WroteAt("ns/a@u", podsGR, "42")
	store.Bookmark("41")
	if store.LastStoreSyncResourceVersion() == "" {
		// The AtomicFIFO gate is off here: the guard must then never block.
		require.NoError(t, g.EnsureReady("ns/a@u"))
		return
	}
	require.ErrorIs(t, g.EnsureReady("ns/a@u"), ErrStaleCache)
	store.Bookmark("42")
	require.NoError(t, g.EnsureReady("ns/a@u"))
}

func TestGuardConcurrent(t *testing.T) {
	pods, svcs := newFakeStore("1"), newFakeStore("1")
	g, clk, _ := newTestGuard(t, WithStore(podsGR, pods), WithStore(servicesGR, svcs), WithTTL(time.Minute))
	const workers, rounds, owners = 8, 300, 16
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				key := fmt.Sprintf("ns/o-%d@u", (w+i)%owners)
				rv := fmt.Sprint(i + 2)
				switch i % 5 {
				case 0, 1:
					g.WroteAt(key, podsGR, rv)
				case 2:
					g.WroteAt(key, servicesGR, rv)
				case 3:
					_ = g.EnsureReady(key)
				default:
					pods.set(rv)
					svcs.set(rv)
					if i%25 == 4 {
						g.Clear(key)
						clk.Step(time.Second)
					}
				}
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, g.Len(), owners, "one record per owner name")

	// Once the stores are past every write, every owner is ready and gone.
	pods.set("1000000")
	svcs.set("1000000")
	for o := range owners {
		require.NoError(t, g.EnsureReady(fmt.Sprintf("ns/o-%d@u", o)))
	}
	assert.Zero(t, g.Len())
}

// FuzzGuard feeds arbitrary resource versions: nothing panics, and the guard
// blocks exactly when both versions are well formed and the write is newer.
func FuzzGuard(f *testing.F) {
	for _, seed := range [][2]string{{"10", "9"}, {"9", "10"}, {"", ""}, {"0", "1"}, {"abc", "1"}, {"1", "abc"},
		{"100", "99"}, {"007", "6"}, {"18446744073709551616", "18446744073709551615"}, {"-1", "1"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, wrote, read string) {
		g := NewGuard(WithStore(podsGR, newFakeStore(read)))
		g.WroteAt("ns/a@u", podsGR, wrote)
		err := g.EnsureReady("ns/a@u")
		if newerDecimal(wrote, read) {
			require.ErrorIs(t, err, ErrStaleCache)
		} else {
			require.NoError(t, err)
		}
	})
}

func TestIsStaleCache(t *testing.T) {
	stale := &StaleCacheError{OwnerKey: "ns/a", WroteRV: "2", ReadRV: "1"}
	assert.True(t, IsStaleCache(fmt.Errorf("syncing: %w", stale)))
	assert.False(t, IsStaleCache(nil))
	assert.False(t, IsStaleCache(fmt.Errorf("refused")))
}

// TestGuardResources: the resources of the registered stores, in order,
// and none for a guard without stores.
func TestGuardResources(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	rs := schema.GroupResource{Group: "apps", Resource: "replicasets"}
	g := NewGuard(WithStore(rs, newFakeStore("1")), WithStore(pods, newFakeStore("1")))
	assert.Equal(t, []schema.GroupResource{pods, rs}, g.Resources())
	assert.Empty(t, NewGuard().Resources())
}
