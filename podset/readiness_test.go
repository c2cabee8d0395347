package podset

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ctrlkit/ctrlkit/childset"
)

// PodReadiness reads the Ready condition and when it last turned true.
func TestPodReadiness(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	pod := &v1.Pod{Status: v1.PodStatus{Conditions: []v1.PodCondition{
		{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: at},
	}}}
	var kind PodReadiness
	require.True(t, kind.Ready(pod))
	assert.True(t, at.Time.Equal(kind.ReadySince(pod)))
	pod.Status.Conditions[0].Status = v1.ConditionFalse
	assert.False(t, kind.Ready(pod))
	assert.True(t, kind.ReadySince(pod).IsZero())
	var _ childset.ReadySinceKind[*v1.Pod] = kind
}
