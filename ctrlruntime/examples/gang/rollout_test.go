package gang_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/gang"
	"github.com/ctrlkit/ctrlkit/podset"
)

func (f fixture) gang(t *testing.T) *gang.Gang {
	t.Helper()
	g := &gang.Gang{}
	require.NoError(t, f.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "g"}, g))
	return g
}

// markReady marks every pod ready since an hour ago, as a kubelet would.
func (f fixture) markReady(t *testing.T) {
	t.Helper()
	for _, p := range f.list(t) {
		if (podset.PodReadiness{}).Ready(p) {
			continue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))}}
		require.NoError(t, f.c.Status().Update(context.Background(), p))
	}
}

func (f fixture) images(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, p := range f.list(t) {
		out[name] = p.Spec.Containers[0].Image
	}
	return out
}

// rollTo sets the image and syncs until the gang reports every pod at the
// update revision, checking after each sync that no more than 3 pods exist
// and at least 2 are ready (maxUnavailable 1). It returns the first pod
// replaced.
func (f fixture) rollTo(t *testing.T, image string) (first string) {
	t.Helper()
	g := f.gang(t)
	g.Spec.Template.Spec.Containers[0].Image = image
	require.NoError(t, f.c.Update(context.Background(), g))
	for n := 1; n <= 20; n++ {
		before := f.images(t)
		f.sync(t)
		pods := f.list(t)
		ready := 0
		for name, p := range pods {
			if (podset.PodReadiness{}).Ready(p) {
				ready++
			}
			if first == "" && before[name] != "" && before[name] != image && p.Spec.Containers[0].Image == image {
				first = name
			}
		}
		for name := range before {
			if _, ok := pods[name]; !ok && first == "" {
				first = name
			}
		}
		assert.LessOrEqual(t, len(pods), 3, "sync %d", n)
		assert.GreaterOrEqual(t, ready, 2, "sync %d", n)
		f.markReady(t)
		st := f.gang(t).Status
		if st.UpdateRevision != "" && st.CurrentRevision == st.UpdateRevision && st.UpdatedReplicas == 3 && len(pods) == 3 {
			assert.Equal(t, map[string]string{"g-0": image, "g-1": image, "g-2": image}, f.images(t))
			return first
		}
	}
	t.Fatalf("the rollout to %s did not finish: %+v", image, f.gang(t).Status)
	return ""
}

// A template change replaces the pods in place of their index, highest
// first, one unavailable at a time; a rollback reuses the first revision.
func TestGangRollingUpdate(t *testing.T) {
	f := newFixture(t, 3)
	g := f.gang(t)
	unavailable := intstr.FromInt32(1)
	g.Spec.Strategy.RollingUpdate = &gang.RollingUpdate{MaxUnavailable: &unavailable}
	g.Spec.MinReadySeconds = 10
	require.NoError(t, f.c.Update(context.Background(), g))
	f.sync(t)
	f.markReady(t)
	f.sync(t)
	st := f.gang(t).Status
	require.Equal(t, int32(3), st.AvailableReplicas, "%+v", st)
	original := st.UpdateRevision
	require.NotEmpty(t, original)

	assert.Equal(t, "g-2", f.rollTo(t, "trainer:2"), "the highest index goes first")
	var revs appsv1.ControllerRevisionList
	require.NoError(t, f.c.List(context.Background(), &revs))
	assert.Len(t, revs.Items, 2)
	assert.NotEqual(t, original, f.gang(t).Status.UpdateRevision)

	f.rollTo(t, "trainer:1")
	assert.Equal(t, original, f.gang(t).Status.UpdateRevision, "the rollback reuses the revision")
	require.NoError(t, f.c.List(context.Background(), &revs))
	assert.Len(t, revs.Items, 2)
}
