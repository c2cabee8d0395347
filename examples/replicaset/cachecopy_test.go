package replicaset

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestSyncLeavesTheCachedOwnerAlone guards the status write, which passes the
// informer's own object on without a copy: whatever the sync does (nothing,
// a status update, a failed manageReplicas adding a ReplicaFailure
// condition), the cached owner must come out unchanged.
func TestSyncLeavesTheCachedOwnerAlone(t *testing.T) {
	tests := []struct {
		name    string
		pods    int
		ready   bool
		failErr error
	}{
		{name: "steady state", pods: 2, ready: true},
		{name: "status changes", pods: 1, ready: true},
		{name: "manageReplicas fails", pods: 0, failErr: errors.New("create refused")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			forBothKinds(t, func(t *testing.T, k testKind) {
				o := k.newOwner(2, fooBar)
				k.setStatus(o, 2, 2, 2)
				e := newEnvWithOwner(t, k, o)
				phase := v1.PodPending
				if tc.ready {
					phase = v1.PodRunning
				}
				e.addPods(newPods(tc.pods, "pod", o, k, phase, fooBar, true)...)
				if tc.failErr != nil {
					e.pc.CreateErr = tc.failErr
				}
				cached, exists, err := k.store(e.inf).GetByKey(key(o))
				require.NoError(t, err)
				require.True(t, exists)
				before := cached.(runtime.Object).DeepCopyObject()

				syncErr := e.sync(o)
				if tc.failErr != nil {
					require.ErrorIs(t, syncErr, tc.failErr)
				} else {
					require.NoError(t, syncErr)
				}
				require.Equal(t, before, cached, "the cached owner is unchanged")
			})
		})
	}
}
