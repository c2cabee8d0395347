package scenarios

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The over-creation sampler must be able to fail: with no controller
// running, the test itself makes pods for a ReplicaSet. Pods created after a
// scale-up to 3 are within the spec in force; a fourth is an excess, and the
// replay pins it at the revision it was created.
func TestOverCreationSamplerCatchesExcess(t *testing.T) {
	s := newScenario(t, 2*time.Minute)
	labels := map[string]string{"app": "sampler"}
	rs := s.createRS("web", 0, labels)
	s.scaleRS("web", 3)
	makePod := func(i int) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Labels: labels, OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: rs.UID, Controller: ptr.To(true),
			}}},
			Spec: podTemplate(labels).Spec,
		}
		_, err := s.client.CoreV1().Pods(s.ns).Create(s.ctx, pod, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for i := range 3 {
		makePod(i)
	}
	s.eventually(30*time.Second, "the sampler to see 3 pods", func() (bool, string) {
		n := s.overCreation.eventCount("pod")
		return n >= 3, fmt.Sprintf("%d pod events", n)
	})
	violations, _ := s.overCreation.replay()
	assert.Empty(t, violations, "3 pods for 3 replicas")

	makePod(3)
	s.eventually(30*time.Second, "the sampler to see the fourth pod", func() (bool, string) {
		n := s.overCreation.eventCount("pod")
		return n >= 4, fmt.Sprintf("%d pod events", n)
	})
	violations, peak := s.overCreation.replay()
	require.Len(t, violations, 1)
	assert.Equal(t, "ReplicaSet/web", violations[0].owner)
	assert.Equal(t, 4, violations[0].pods)
	assert.Equal(t, 3, violations[0].replicas)
	assert.Equal(t, "web-3", violations[0].pod)
	assert.Equal(t, 1, peak["ReplicaSet/web"])

	// Scaling down below the pods that exist is not an excess by creation.
	s.scaleRS("web", 1)
	require.NoError(t, s.client.CoreV1().Pods(s.ns).Delete(s.ctx, "web-0", metav1.DeleteOptions{}))
	s.eventually(30*time.Second, "the sampler to see the deletion", func() (bool, string) {
		n := s.overCreation.eventCount("pod")
		return n >= 5, fmt.Sprintf("%d pod events", n)
	})
	violations, _ = s.overCreation.replay()
	assert.Len(t, violations, 1, "a scale-down and a deletion add no violation")
	// The excess above was made on purpose; without this the cleanup check
	// would fail the test, which is the behaviour being tested.
	s.overCreation.allow("web", 1, "the test created the fourth pod itself")
}
