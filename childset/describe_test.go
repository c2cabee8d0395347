package childset_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/childset"
)

// The status laid out for an owner carries every count, and the collision
// count by the rule: the sync's while the owner rolls out, the stored one,
// nil included, while it does not.
func TestStatusFields(t *testing.T) {
	conds := []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing}}
	st := childset.Status{
		Replicas: 5, ReadyReplicas: 4, AvailableReplicas: 3, TerminatingReplicas: 1, ObservedGeneration: 7,
		UpdatedReplicas: 2, CurrentReplicas: 3, CurrentRevision: "a", UpdateRevision: "b", CollisionCount: 2,
		Conditions: conds,
	}
	got := st.Fields(ptr.To[int32](9))
	assert.Equal(t, childset.StatusFields{
		ObservedGeneration: 7, Replicas: 5, ReadyReplicas: 4, AvailableReplicas: 3,
		UpdatedReplicas: 2, CurrentReplicas: 3, TerminatingReplicas: 1,
		CurrentRevision: "a", UpdateRevision: "b", CollisionCount: ptr.To[int32](2), Conditions: conds,
	}, got)
	st.CollisionCount = 5
	assert.Equal(t, int32(2), *got.CollisionCount, "a copy, not the Status's own")

	idle := childset.Status{Replicas: 1, CollisionCount: 0}
	assert.Nil(t, idle.Fields(nil).CollisionCount, "no rollout, nothing stored: nothing written")
	stored := ptr.To[int32](4)
	assert.Same(t, stored, idle.Fields(stored).CollisionCount, "no rollout: the stored count is kept")
}
