package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

// The child sampler must be able to fail. Its replay is fed a history, in
// shuffled arrival order as two watches would deliver it: an excess by
// creation and a name held twice are caught at their revisions; a
// scale-down that leaves more children than replicas until the deletions
// land is not an excess.
func TestChildSamplerReplay(t *testing.T) {
	s := &childSampler{t: t, ownerKind: "Gang"}
	owner := func(rv int64, replicas int64) childEvent {
		return childEvent{rv: rv, owner: true, name: "g", uid: "g-uid", replicas: replicas}
	}
	child := func(rv int64, name, uid string, live bool) childEvent {
		return childEvent{rv: rv, name: name, uid: types.UID(uid), ctrl: "g-uid", live: live, deleted: !live}
	}
	s.events = []childEvent{
		child(3, "g-0", "a", true), // arrives before the owner's scale-up at 2
		owner(1, 0),
		owner(2, 2),
		child(4, "g-1", "b", true),
		owner(5, 1), // scale-down: 2 live for 1 replica is no excess
		child(6, "g-1", "b", false),
	}
	r := s.replay()
	assert.Empty(t, r.violations)
	assert.Equal(t, map[string]bool{"g-0": true}, r.live["g-uid"])
	assert.Equal(t, map[string]bool{"g-0": true, "g-1": true}, r.created)

	// A third child while replicas is 1 is an excess, pinned at its
	// revision; a second live object named g-0 is a name held twice.
	s.events = append(s.events, child(7, "g-2", "c", true), child(8, "g-0", "d", true))
	r = s.replay()
	require.Len(t, r.violations, 2)
	assert.Equal(t, int64(7), r.violations[0].rv)
	assert.Equal(t, "Gang g had 2 live children for replicas 1 (child g-2)", r.violations[0].what)
	assert.Equal(t, int64(8), r.violations[1].rv)
	assert.Equal(t, "child g-0 held by two live objects (UIDs a and d)", r.violations[1].what)
}
