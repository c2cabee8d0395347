package scenarios

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Fault 5: the shipped deploy/rbac-*.yaml, applied as is, grants every request
// the controller makes, with RBAC authorization and
// OwnerReferencesPermissionEnforcement on. The controller runs as the
// manifest's service account through every path that writes: leader
// election on the shipped Lease, scale-up (pods created with
// blockOwnerDeletion), adoption and release (patches), scale-down (deletes),
// status updates and events, for both owner kinds. Any request the apiserver
// refuses fails the test and names the missing permission.
func TestFaultShippedRBACCoversEveryVerb(t *testing.T) {
	s := newFaultScenario(t, 5*time.Minute)
	labels := map[string]string{"app": "rbac"}
	pods := s.client.CoreV1().Pods(s.ns)
	orphan, err := pods.Create(s.ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "orphan", Labels: labels},
		Spec:       podTemplate(labels).Spec,
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	in := s.startInstance("replica-rbac")
	s.eventually(time.Minute, "the replica to acquire the shipped Lease", func() (bool, string) {
		return !in.leadingSince().IsZero(), "not leading"
	})
	rs := s.createRS("web", 5, labels)
	s.waitRS("web", 2*time.Minute, "5 replicas", func(rs *appsv1.ReplicaSet) bool { return rs.Status.Replicas == 5 })
	got, err := pods.Get(s.ctx, orphan.Name, metav1.GetOptions{})
	require.NoError(t, err)
	require.NotNil(t, metav1.GetControllerOf(got), "the orphan is adopted")
	assert.Equal(t, rs.UID, metav1.GetControllerOf(got).UID)

	_, err = pods.Patch(s.ctx, orphan.Name, types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"moved"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	s.eventually(time.Minute, "the relabelled pod to be released", func() (bool, string) {
		p, err := pods.Get(s.ctx, orphan.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return metav1.GetControllerOf(p) == nil, fmt.Sprintf("owners %v", p.OwnerReferences)
	})
	// Scale down only once the replacement exists: a create decided before
	// a scale-down can land after it, which the over-creation check would
	// rightly count against the smaller spec.
	s.eventually(time.Minute, "a replacement for the released pod", func() (bool, string) {
		n := len(ownedBy(activePods(s.listPods("app=rbac")), rs.UID))
		return n == 5, fmt.Sprintf("%d pods", n)
	})
	s.scaleRS("web", 2)
	rs = s.waitRS("web", time.Minute, "2 replicas", func(rs *appsv1.ReplicaSet) bool { return rs.Status.Replicas == 2 })
	requireRSStatus(t, rs, 2)
	assert.Len(t, ownedBy(activePods(s.listPods("app=rbac")), rs.UID), 2)

	// The ReplicationController kind, under the same identity.
	rcLabels := map[string]string{"app": "rbac-rc"}
	template := podTemplate(rcLabels)
	rcs := s.client.CoreV1().ReplicationControllers(s.ns)
	rc, err := rcs.Create(s.ctx, &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "rc"},
		Spec:       corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](3), Selector: rcLabels, Template: &template},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	s.runController(kindReplicationController)
	s.eventually(time.Minute, "the ReplicationController's 3 replicas", func() (bool, string) {
		got, err := rcs.Get(s.ctx, "rc", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return got.Status.ObservedGeneration >= got.Generation && got.Status.Replicas == 3, fmt.Sprintf("status %+v", got.Status)
	})
	assert.Len(t, ownedBy(activePods(s.listPods("app=rbac-rc")), rc.UID), 3)

	// Events are written asynchronously; wait for the controller's.
	s.eventually(30*time.Second, "the controller's events", func() (bool, string) {
		list, err := s.client.CoreV1().Events(s.ns).List(s.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(list.Items) > 0, "no event yet"
	})
	lease, err := s.client.CoordinationV1().Leases(controllerNamespace).Get(s.ctx, controllerLease, metav1.GetOptions{})
	require.NoError(t, err)
	require.NotNil(t, lease.Spec.HolderIdentity)
	assert.Equal(t, in.id, *lease.Spec.HolderIdentity)
	assert.Empty(t, s.audit.refusals())
	assert.Empty(t, in.audit.refusals())
}
