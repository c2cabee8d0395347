package scenarios

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// The same controller core serves a ReplicationController. It is
// scaled 0 → 50 → 5, and an orphan that matches its equality selector is
// adopted with a v1/ReplicationController owner reference.
func TestReplicationControllerScaleAndAdopt(t *testing.T) {
	s := newScenario(t, 5*time.Minute)
	labels := map[string]string{"app": "rc"}
	rcs := s.client.CoreV1().ReplicationControllers(s.ns)
	template := podTemplate(labels)
	rc, err := rcs.Create(s.ctx, &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "rc"},
		Spec:       corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](0), Selector: labels, Template: &template},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	rec := s.recordPods("app=rc")
	s.runController(kindReplicationController)

	waitRC := func(what string, cond func(*corev1.ReplicationController) bool) *corev1.ReplicationController {
		t.Helper()
		var got *corev1.ReplicationController
		s.eventually(2*time.Minute, what, func() (bool, string) {
			got, err = rcs.Get(s.ctx, "rc", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return got.Status.ObservedGeneration >= got.Generation && cond(got), fmt.Sprintf("generation %d, status %+v", got.Generation, got.Status)
		})
		return got
	}
	scale := func(n int32) {
		t.Helper()
		_, err := rcs.Patch(s.ctx, "rc", types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)), metav1.PatchOptions{})
		require.NoError(t, err)
	}

	waitRC("the empty ReplicationController to be observed", func(rc *corev1.ReplicationController) bool { return rc.Status.Replicas == 0 })
	scale(50)
	waitRC("50 replicas", func(rc *corev1.ReplicationController) bool {
		return rc.Status.Replicas == 50 && rc.Status.FullyLabeledReplicas == 50
	})
	h := s.settle(rec, 2*time.Second)
	assert.Equal(t, 50, h.Created)
	assert.LessOrEqual(t, h.MaxActive, 50)

	// The orphan is created already bound to a node, so the ranking keeps it
	// over the unassigned pods when the surplus of one is removed and when
	// scaling down: the adoption can then be checked on the surviving pod.
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Labels: labels}, Spec: podTemplate(labels).Spec}
	orphan.Spec.NodeName = "node-1"
	// Adopting it makes 51 pods for 50 replicas until the surplus is
	// deleted: an excess by adoption, not by creation.
	s.overCreation.allow("rc", 1, "an orphan is adopted while 50 pods run")
	_, err = s.client.CoreV1().Pods(s.ns).Create(s.ctx, orphan, metav1.CreateOptions{})
	require.NoError(t, err)
	want := metav1.OwnerReference{APIVersion: "v1", Kind: "ReplicationController", Name: "rc", UID: rc.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	s.eventually(time.Minute, "the orphan to be adopted", func() (bool, string) {
		p, err := s.client.CoreV1().Pods(s.ns).Get(s.ctx, "orphan", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(p.OwnerReferences) == 1 && assert.ObjectsAreEqual(want, p.OwnerReferences[0]), fmt.Sprintf("owners %+v", p.OwnerReferences)
	})
	waitRC("50 replicas after the adoption", func(rc *corev1.ReplicationController) bool { return rc.Status.Replicas == 50 })
	h = s.settle(rec, 2*time.Second)
	assert.Equal(t, 51, h.Created, "50 created by the controller plus the orphan")
	assert.Equal(t, 1, h.Deleted, "the surplus pod")
	assert.False(t, h.DeletedNames["orphan"], "the assigned orphan outranks unassigned pods")

	scale(5)
	waitRC("5 replicas", func(rc *corev1.ReplicationController) bool { return rc.Status.Replicas == 5 })
	h = s.settle(rec, 2*time.Second)
	assert.Equal(t, 51, h.Created, "no pod created while scaling down")
	assert.Equal(t, 46, h.Deleted, "1 surplus + 45 scaled away")
	left := ownedBy(activePods(s.listPods("app=rc")), rc.UID)
	assert.Len(t, left, 5)
	assert.False(t, h.DeletedNames["orphan"], "the adopted orphan survives the scale-down")
}
