package scenarios

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/childset"
)

// The rollout sampler must be able to fail. Its replay is fed histories of
// a 4-child owner (maxSurge 1, maxUnavailable 1, minReadySeconds 1), in
// shuffled arrival order, and each broken invariant is caught.
func TestRolloutSamplerReplay(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	owner := func(rv int64, partition int32) rolloutEvent {
		return rolloutEvent{source: fromOwner, rv: rv, at: t0, name: "o", uid: "o-uid", replicas: 4,
			bounds: childset.RolloutBounds{MaxSurge: 1, MaxUnavailable: 1}, partition: partition, minReady: time.Second}
	}
	// child is available from t0 on when ready, ready since t0-1s.
	child := func(rv int64, uid string, index int, hash string, ready, deleted bool) rolloutEvent {
		return rolloutEvent{source: fromChild, rv: rv, at: t0, name: uid, uid: types.UID(uid), ctrl: "o-uid",
			index: index, hash: hash, ready: ready, readySince: t0.Add(-time.Second), deleted: deleted}
	}
	base := []rolloutEvent{
		child(3, "a", 0, "old", true, false), owner(1, 0), child(4, "b", 1, "old", true, false),
		child(2, "c", 2, "old", true, false), child(5, "d", 3, "old", true, false),
	}
	// run replays base and events, checking from rv 6, after base.
	run := func(indexed bool, held string, events ...rolloutEvent) rolloutReplay {
		s := &rolloutSampler{t: t, indexed: indexed, checkFrom: 6, held: held}
		s.events = append(append([]rolloutEvent{}, base...), events...)
		return s.replay()
	}

	// A surge of one, one unavailable, then the old child gone: no violation.
	r := run(false, "", child(6, "e", -1, "new", false, false), child(7, "e", -1, "new", true, false), child(8, "a", 0, "old", true, true))
	assert.Empty(t, r.violations)
	assert.Equal(t, 5, r.maxTotal)
	assert.Equal(t, 4, r.minAvail, "while e is not ready, and once a is gone")
	assert.Equal(t, map[string]string{"b": "old", "c": "old", "d": "old", "e": "new"}, r.live)

	// Two surged children at once: 6 > 4 + 1.
	r = run(false, "", child(6, "e", -1, "new", false, false), child(7, "f", -1, "new", false, false))
	require.Len(t, r.violations, 1)
	assert.Equal(t, "rv 7: 6 children > replicas 4 + maxSurge 1", r.violations[0])

	// Two available children deleted before their replacements: 2 < 4 - 1.
	r = run(false, "", child(6, "a", 0, "old", true, true), child(7, "b", 1, "old", true, true))
	require.Len(t, r.violations, 1)
	assert.Equal(t, "rv 7: 2 available < replicas 4 - maxUnavailable 1", r.violations[0])

	// A child ready for less than minReadySeconds is not available.
	fresh := child(6, "e", -1, "new", true, false)
	fresh.readySince = t0
	r = run(false, "", fresh, child(7, "a", 0, "old", true, true), child(8, "b", 1, "old", true, true))
	assert.Contains(t, r.violations, "rv 8: 2 available < replicas 4 - maxUnavailable 1")

	// Partition 3 (interchangeable): only 2 children left at "old".
	r = run(false, "old", owner(6, 3), child(7, "a", 0, "old", true, true), child(8, "e", -1, "new", true, false),
		child(9, "b", 1, "old", true, true))
	require.Len(t, r.violations, 1)
	assert.Equal(t, "rv 9: 2 children at old < partition 3", r.violations[0])

	// Indexed: index 0, below partition 2, replaced; index 3 held twice.
	r = run(true, "old", owner(6, 2), child(7, "a", 0, "old", true, true), child(8, "a2", 0, "new", true, false))
	require.Len(t, r.violations, 1)
	assert.Equal(t, "rv 8: a2 (index 0, below partition 2) is at new, not old", r.violations[0])
	r = run(true, "", child(6, "d2", 3, "new", false, false))
	require.Len(t, r.violations, 1)
	assert.Equal(t, "rv 6: index 3 held by 2 children", r.violations[0])

	// Nothing is checked before the first phase; each phase has its
	// figures.
	s := &rolloutSampler{t: t, events: []rolloutEvent{owner(1, 0), child(2, "a", -1, "x", false, false)}}
	assert.Equal(t, 0, s.replay().samples)
	s.events = append(s.events, base...)
	s.lastRV = 5
	s.startPhase("one")
	s.events = append(s.events, child(6, "e", -1, "new", true, false))
	s.lastRV = 6
	s.startPhase("two")
	s.events = append(s.events, child(7, "a", 0, "old", true, true), child(8, "b", 1, "old", true, true))
	r = s.replay()
	require.Len(t, r.phases, 2)
	assert.Equal(t, phaseFigures{name: "one", samples: 1, maxTotal: 5, minAvail: 5}, r.phases[0])
	assert.Equal(t, phaseFigures{name: "two", samples: 2, maxTotal: 4, minAvail: 3}, r.phases[1])
	assert.Empty(t, r.violations, "3 available is replicas 4 - maxUnavailable 1")
}
