package e2e

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// The sampler must catch an over-creation, whatever order the two watches
// delivered their events in, and must not count a scale-down in progress
// or an update of a pod already counted.
func TestSamplerCatchesOverCreation(t *testing.T) {
	const uid = types.UID("group-uid")
	group := func(rv int, replicas int64) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": replicas}}}
		u.SetName("web")
		u.SetUID(uid)
		u.SetResourceVersion(strconv.Itoa(rv))
		return u
	}
	pod := func(name string, rv int) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name: name, ResourceVersion: strconv.Itoa(rv),
			OwnerReferences: []metav1.OwnerReference{{UID: uid, Controller: new(true), Name: "web", Kind: "PodGroup"}},
		}}
	}
	s := &overCreationSampler{}
	h := s.handler()
	// Delivered out of revision order: the pods' watch ran ahead.
	h.OnAdd(pod("a", 2), false)
	h.OnAdd(pod("b", 3), false)
	h.OnAdd(group(1, 2), false)
	h.OnAdd(pod("c", 4), false)
	h.OnUpdate(nil, group(5, 1)) // scale down to 1: three pods, no violation
	h.OnUpdate(nil, pod("a", 6)) // an update of a counted pod: no sample
	h.OnDelete(pod("b", 7))      // the deletions land
	h.OnDelete(cache.DeletedFinalStateUnknown{Obj: pod("c", 0)})
	rep := s.replay()
	assert.Equal(t, 3, rep.Samples)
	assert.Equal(t, 3, rep.Created)
	assert.Equal(t, 3, rep.MaxActive)
	assert.Equal(t, 1, rep.MaxExcess)
	assert.Len(t, rep.Violations, 1, "only pod c, at revision 4, exceeded 2 replicas: %v", rep.Violations)
}
