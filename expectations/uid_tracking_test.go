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

// blockingWrapped is a ControllerExpectationsInterface whose ExpectDeletions
// runs a hook, to place an observation inside ExpectDeletions' window.
type blockingWrapped struct {
	*ControllerExpectations
	onExpectDeletions func()
}

func (b *blockingWrapped) ExpectDeletions(key string, dels int) error {
	if b.onExpectDeletions != nil {
		b.onExpectDeletions()
	}
	return b.ControllerExpectations.ExpectDeletions(key, dels)
}

// TestUIDTrackingObservationDuringExpect shows both that no lock is held
// while calling the wrapped cache (the hook re-enters the tracker, which
// would deadlock otherwise) and that an observation in that window is
// applied to the new count, not lost.
func TestUIDTrackingObservationDuringExpect(t *testing.T) {
	w := &blockingWrapped{ControllerExpectations: NewControllerExpectations()}
	u := NewUIDTrackingControllerExpectations(w)
	fired := false
	w.onExpectDeletions = func() {
		w.onExpectDeletions = nil
		fired = true
		u.DeletionObserved("rc", "a")
		u.DeletionObserved("rc", "a")
	}
	done := make(chan error, 1)
	go func() { done <- u.ExpectDeletions("rc", []string{"a", "b"}) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("ExpectDeletions deadlocked: a lock is held across the wrapped call")
	}
	require.True(t, fired)
	rec, _, _ := u.GetExpectations("rc")
	_, del := rec.GetExpectations()
	assert.Equal(t, int64(1), del, "the early observation counts once against the new record")
	u.DeletionObserved("rc", "b")
	assert.True(t, u.SatisfiedExpectations("rc"))
}
