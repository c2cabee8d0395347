package expectations

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/sets"
)

// uidTrackingAPI pins the method set controllers use on the UID-tracking
// type, including the upstream signatures that differ from the interface.
type uidTrackingAPI interface {
	GetExpectations(key string) (*ControlleeExpectations, bool, error)
	SatisfiedExpectations(key string) bool
	DeleteExpectations(key string)
	SetExpectations(key string, add, del int) error
	ExpectCreations(key string, adds int) error
	ExpectDeletions(key string, deletedKeys []string) error
	CreationObserved(key string)
	DeletionObserved(key, deleteKey string)
	RaiseExpectations(key string, add, del int)
	LowerExpectations(key string, add, del int)
	GetUIDs(key string) sets.Set[string]
	ExpectCreationsNamed(key string, names []string) error
	CreationObservedNamed(key, name string)
	Pending(key string) (PendingReport, bool)
	PendingAll() []PendingReport
}

var _ uidTrackingAPI = (*UIDTrackingControllerExpectations)(nil)

// TestUpstreamUIDExpectations ports upstream's TestUIDExpectations: one
// shared instance, several owners in shuffled order.
func TestUpstreamUIDExpectations(t *testing.T) {
	u := NewUIDTrackingControllerExpectations(NewControllerExpectations())
	replicas := []int{2, 1, 0, 5}
	rand.Shuffle(len(replicas), func(i, j int) { replicas[i], replicas[j] = replicas[j], replicas[i] })
	for _, n := range replicas {
		t.Run(fmt.Sprintf("Replication controller with %d replicas", n), func(t *testing.T) {
			rcKey := fmt.Sprintf("default/rc-%d", n)
			var podKeys []string
			for i := range 5 {
				podKeys = append(podKeys, fmt.Sprintf("default/pod%d-rc-%d", i, n))
			}
			require.NoError(t, u.ExpectDeletions(rcKey, podKeys))
			assert.False(t, u.SatisfiedExpectations(rcKey))
			for _, p := range podKeys {
				u.DeletionObserved(rcKey, p)
			}
			assert.True(t, u.SatisfiedExpectations(rcKey))
			u.DeleteExpectations(rcKey)
			assert.Nil(t, u.GetUIDs(rcKey))
			_, exists, err := u.GetExpectations(rcKey)
			require.NoError(t, err)
			assert.False(t, exists)
		})
	}
}

func TestUIDTrackingDeletions(t *testing.T) {
	tests := []struct {
		name        string
		expect      []string
		observe     []string
		wantDel     int64
		wantUIDs    []string
		wantSatisfy bool
	}{
		{name: "each expected key lowers once", expect: []string{"a", "b"}, observe: []string{"a", "a", "b", "b"}, wantSatisfy: true, wantUIDs: []string{}},
		{name: "duplicates collapse", expect: []string{"a", "a", "a"}, wantDel: 1, wantUIDs: []string{"a"}},
		{name: "unexpected keys are ignored", expect: []string{"a"}, observe: []string{"x", "y"}, wantDel: 1, wantUIDs: []string{"a"}},
		{name: "nil list is fulfilled at once", expect: nil, wantSatisfy: true, wantUIDs: []string{}},
		{name: "graceful update then delete", expect: []string{"ns/p1", "ns/p2"}, observe: []string{"ns/p1", "ns/p1"}, wantDel: 1, wantUIDs: []string{"ns/p2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := NewUIDTrackingControllerExpectations(NewControllerExpectations())
			require.NoError(t, u.ExpectDeletions("rc", tt.expect))
			for _, k := range tt.observe {
				u.DeletionObserved("rc", k)
			}
			rec, ok, err := u.GetExpectations("rc")
			require.NoError(t, err)
			require.True(t, ok)
			add, del := rec.GetExpectations()
			assert.Zero(t, add)
			assert.Equal(t, tt.wantDel, del)
			assert.Equal(t, tt.wantSatisfy, u.SatisfiedExpectations("rc"))
			assert.Equal(t, sets.New(tt.wantUIDs...), u.GetUIDs("rc"))
		})
	}
}

func TestUIDTrackingResetsAddAndClobbers(t *testing.T) {
	logs := &logSink{}
	u := NewUIDTrackingControllerExpectations(NewControllerExpectations(WithLogger(logs.logger())))
	require.NoError(t, u.ExpectCreations("rc", 3))
	require.NoError(t, u.ExpectDeletions("rc", []string{"a", "b"}))
	rec, _, _ := u.GetExpectations("rc")
	add, del := rec.GetExpectations()
	assert.Zero(t, add, "ExpectDeletions resets add")
	assert.Equal(t, int64(2), del)
	assert.Empty(t, logs.matching("Clobbering"))

	require.NoError(t, u.ExpectDeletions("rc", []string{"c"}))
	lines := logs.matching("Clobbering existing delete keys")
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], `"keys"=["a" "b"]`)
	u.DeletionObserved("rc", "a")
	assert.False(t, u.SatisfiedExpectations("rc"), "the clobbered keys no longer count")
	assert.Equal(t, []string{"c"}, u.PendingDeletions("rc"))
}

func TestUIDTrackingPassThrough(t *testing.T) {
	u := NewUIDTrackingControllerExpectations(NewControllerExpectations())
	require.NoError(t, u.SetExpectations("rc", 2, 0))
	u.CreationObserved("rc")
	u.RaiseExpectations("rc", 0, 1)
	u.LowerExpectations("rc", 1, 0)
	rec, ok, err := u.GetExpectations("rc")
	require.NoError(t, err)
	require.True(t, ok)
	add, del := rec.GetExpectations()
	assert.Zero(t, add)
	assert.Equal(t, int64(1), del)
	assert.Nil(t, u.GetUIDs("rc"), "SetExpectations does not create a key set")
}

// One handle serves creations by name and deletions by dependent key: the
// named methods pass through to the wrapped cache.
func TestUIDTrackingPassesNamedCreationsThrough(t *testing.T) {
	c := NewControllerExpectations()
	u := NewUIDTrackingControllerExpectations(c)
	require.NoError(t, u.ExpectCreationsNamed("rc", []string{"a", "b", "a"}))
	u.CreationObservedNamed("rc", "a")
	u.CreationObservedNamed("rc", "a") // repeated: ignored
	u.CreationObservedNamed("rc", "x") // unexpected: ignored
	assert.False(t, u.SatisfiedExpectations("rc"))
	r, ok := c.Pending("rc")
	require.True(t, ok)
	assert.Equal(t, []string{"b"}, r.PendingNames, "the wrapped record tracks the names")
	all := u.PendingAll()
	require.Len(t, all, 1)
	assert.Equal(t, []string{"b"}, all[0].PendingNames, "reports pass through too")
	u.CreationObservedNamed("rc", "b")
	assert.True(t, u.SatisfiedExpectations("rc"))
	r, ok = u.Pending("rc")
	require.True(t, ok)
	assert.True(t, r.Fulfilled)

	// Deletions by key keep working on the same handle and key.
	require.NoError(t, u.ExpectDeletions("rc", []string{"ns/p"}))
	u.DeletionObserved("rc", "ns/p")
	assert.True(t, u.SatisfiedExpectations("rc"))
}

// Over a cache that cannot track names, the named methods count.
func TestUIDTrackingNamedOverCountingCache(t *testing.T) {
	type countingOnly struct {
		ControllerExpectationsInterface
	}
	c := NewControllerExpectations()
	u := NewUIDTrackingControllerExpectations(countingOnly{c})
	require.NoError(t, u.ExpectCreationsNamed("rc", []string{"a", "b", "a"}))
	rec, _, _ := c.GetExpectations("rc")
	add, _ := rec.GetExpectations()
	assert.Equal(t, int64(2), add, "distinct names are counted")
	u.CreationObservedNamed("rc", "a")
	u.CreationObservedNamed("rc", "z")
	assert.True(t, u.SatisfiedExpectations("rc"))
	_, ok := u.Pending("rc")
	assert.False(t, ok, "a cache that cannot report has nothing to say")
	assert.Nil(t, u.PendingAll())
}

func TestUIDTrackingGetUIDsIsACopy(t *testing.T) {
	u := NewUIDTrackingControllerExpectations(NewControllerExpectations())
	require.NoError(t, u.ExpectDeletions("rc", []string{"a"}))
	got := u.GetUIDs("rc")
	got.Insert("intruder")
	assert.Equal(t, sets.New("a"), u.GetUIDs("rc"))
}

func TestUIDTrackingDropsSetsOfVanishedRecords(t *testing.T) {
	tests := []struct {
		name  string
		after func(u *UIDTrackingControllerExpectations, keys []string)
	}{
		{name: "read after expiry", after: func(u *UIDTrackingControllerExpectations, keys []string) {
			for _, k := range keys {
				assert.Nil(t, u.GetUIDs(k))
			}
		}},
		{name: "swept by other writes", after: func(u *UIDTrackingControllerExpectations, keys []string) {
			for i := 0; i < 100*len(keys) && u.Len() > 1; i++ {
				_ = u.ExpectDeletions("other", []string{"x"})
			}
		}},
		{name: "deleted", after: func(u *UIDTrackingControllerExpectations, keys []string) {
			for _, k := range keys {
				u.DeleteExpectations(k)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, clk, _ := newTestCache(t, time.Minute)
			u := NewUIDTrackingControllerExpectations(c)
			keys := make([]string, 2000)
			for i := range keys {
				keys[i] = keyN(i)
				require.NoError(t, u.ExpectDeletions(keys[i], []string{"p"}))
			}
			clk.Step(2 * time.Minute)
			tt.after(u, keys)
			assert.LessOrEqual(t, u.Len(), 1)
		})
	}
}

// The dependent-key set lives as long as the wrapped record it was made
// with. DeletionObserved consults that record itself, so its effect never
// depends on whether anyone called GetUIDs in between.
func TestUIDTrackingSetFollowsWrappedRecord(t *testing.T) {
	tests := []struct {
		name string
		// between runs after ExpectDeletions("rc", {a, b}); then the test
		// expects 5 deletions on the wrapped record and observes "a".
		between  func(u *UIDTrackingControllerExpectations, c *ControllerExpectations, step func())
		wantLive bool // whether the set survived, so "a" lowered the count
	}{
		{name: "re-Set keeps the set, as upstream", between: func(u *UIDTrackingControllerExpectations, c *ControllerExpectations, _ func()) {
			require.NoError(t, u.ExpectCreations("rc", 1))
		}, wantLive: true},
		{name: "wrapped delete ends it", between: func(_ *UIDTrackingControllerExpectations, c *ControllerExpectations, _ func()) {
			c.DeleteExpectations("rc")
		}},
		{name: "expiry ends it", between: func(_ *UIDTrackingControllerExpectations, _ *ControllerExpectations, step func()) {
			step()
		}},
		{name: "nothing", between: func(*UIDTrackingControllerExpectations, *ControllerExpectations, func()) {}, wantLive: true},
	}
	for _, tt := range tests {
		for _, peek := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/GetUIDs=%v", tt.name, peek), func(t *testing.T) {
				c, clk, _ := newTestCache(t, time.Minute)
				u := NewUIDTrackingControllerExpectations(c)
				require.NoError(t, u.ExpectDeletions("rc", []string{"a", "b"}))
				tt.between(u, c, func() { clk.Step(time.Minute + time.Nanosecond) })
				if peek {
					u.GetUIDs("rc")
				}
				require.NoError(t, c.ExpectDeletions("rc", 5))
				u.DeletionObserved("rc", "a")
				rec, ok, err := c.GetExpectations("rc")
				require.NoError(t, err)
				require.True(t, ok)
				_, del := rec.GetExpectations()
				if tt.wantLive {
					assert.Equal(t, int64(4), del)
					assert.Equal(t, sets.New("b"), u.GetUIDs("rc"))
				} else {
					assert.Equal(t, int64(5), del, "a set of a vanished record lowers nothing")
					assert.Nil(t, u.GetUIDs("rc"))
				}
			})
		}
	}
}

// Over a wrapped cache of another type, whose record lifetimes are unknown,
// the set lives until it is replaced or deleted, as upstream.
func TestUIDTrackingForeignWrappedCache(t *testing.T) {
	type foreign struct{ *ControllerExpectations }
	c := NewControllerExpectations()
	u := NewUIDTrackingControllerExpectations(foreign{c})
	require.NoError(t, u.ExpectDeletions("rc", []string{"a"}))
	c.DeleteExpectations("rc")
	assert.Equal(t, sets.New("a"), u.GetUIDs("rc"))
	require.NoError(t, c.ExpectDeletions("rc", 2))
	u.DeletionObserved("rc", "a")
	rec, _, _ := c.GetExpectations("rc")
	_, del := rec.GetExpectations()
	assert.Equal(t, int64(1), del)
}
