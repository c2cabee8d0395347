package childsetcr_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
	"github.com/ctrlkit/ctrlkit/history"
)

// statusSpec is rsSpec writing nothing but remembering the last status.
type statusSpec struct {
	rsSpec
	last *childset.Status
}

func (s statusSpec) UpdateStatus(_ context.Context, _ *appsv1.ReplicaSet, st childset.Status) error {
	*s.last = st
	return nil
}

// rollingSpec rolls its pods out one surge at a time, never below the
// wanted number of available pods.
type rollingSpec struct{ statusSpec }

func (rollingSpec) RollingUpdate(*appsv1.ReplicaSet) (childset.RollingUpdate, bool) {
	surge, unavailable := intstr.FromInt32(1), intstr.FromInt32(0)
	return childset.RollingUpdate{MaxSurge: &surge, MaxUnavailable: &unavailable}, true
}
func (rollingSpec) RevisionHistoryLimit(*appsv1.ReplicaSet) int32 { return 10 }
func (rollingSpec) CollisionCount(*appsv1.ReplicaSet) *int32      { return nil }

// A Spec without Get keeps its UpdateStatus: the host forwards it.
func TestNewCoreForwardsStatus(t *testing.T) {
	var st childset.Status
	c := fakeClient(t, interceptor.Funcs{}, replicaSet("web", 2, "web"))
	core, err := childsetcr.NewCore(c, nil, nil, statusSpec{last: &st}, podKind{})
	require.NoError(t, err)
	_, err = childsetcr.NewReconciler(core).Reconcile(context.Background(), request("web"))
	require.NoError(t, err)
	assert.Equal(t, int32(0), st.Replicas, "the sync's status counts what it saw before creating")
	_, err = childsetcr.NewReconciler(core).Reconcile(context.Background(), request("web"))
	require.NoError(t, err)
	assert.Equal(t, int32(2), st.Replicas, "the status of the second sync reached the Spec")
	assert.Empty(t, st.UpdateRevision, "no rollout")
}

// A Spec that rolls out gets the controller-runtime history without being
// asked: its revisions are ControllerRevisions written through the client,
// and a template change creates pods at the new revision.
func TestNewCoreWiresRevisions(t *testing.T) {
	ctx := context.Background()
	var st childset.Status
	rs := replicaSet("web", 2, "web")
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(rs).
		WithIndex(&corev1.Pod{}, childsetcr.ControllerField, childsetcr.IndexByController).Build()
	core, err := childsetcr.NewCore(c, nil, nil, rollingSpec{statusSpec{last: &st}}, podKind{})
	require.NoError(t, err)
	r := childsetcr.NewReconciler(core)
	sync := func() {
		t.Helper()
		before := podNameSet(t, c)
		_, err := r.Reconcile(ctx, request("web"))
		require.NoError(t, err)
		var pods corev1.PodList
		require.NoError(t, c.List(ctx, &pods))
		for i := range pods.Items {
			if !before[pods.Items[i].Name] {
				core.ObserveAdd(&pods.Items[i])
			}
		}
	}
	sync()
	var revs appsv1.ControllerRevisionList
	require.NoError(t, c.List(ctx, &revs))
	require.Len(t, revs.Items, 1)
	first := revs.Items[0].Name
	hashes := podHashes(t, c)
	assert.Equal(t, map[string]int{first[len("web-"):]: 2}, hashes)

	// Ready pods are available: the rollout may not go below two of them.
	var pods corev1.PodList
	require.NoError(t, c.List(ctx, &pods))
	for i := range pods.Items {
		p := &pods.Items[i]
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		require.NoError(t, c.Status().Update(ctx, p))
	}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(rs), rs))
	rs.Spec.Template.Spec.Containers[0].Image = "i2"
	require.NoError(t, c.Update(ctx, rs))
	sync()
	require.NoError(t, c.List(ctx, &revs))
	require.Len(t, revs.Items, 2)
	assert.Len(t, podHashes(t, c), 2, "one pod surged at the new revision")
	assert.Equal(t, 3, total(podHashes(t, c)), "replicas + maxSurge")
	sync()
	assert.Equal(t, first, st.CurrentRevision)
	assert.NotEqual(t, first, st.UpdateRevision)
	assert.Equal(t, int32(1), st.UpdatedReplicas)
}

// A Spec that rolls out needs ControllerRevisions in the scheme.
func TestNewCoreRefusesSchemeWithoutRevisions(t *testing.T) {
	s := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(s))
	c := fake.NewClientBuilder().WithScheme(s).Build()
	var st childset.Status
	_, err := childsetcr.NewCore(c, nil, nil, rollingSpec{statusSpec{last: &st}}, podKind{})
	assert.ErrorContains(t, err, "ControllerRevision")
}

// SetupWithManager accepts a Spec that rolls out, and watches its
// revisions.
func TestSetupWithManagerRollingSpec(t *testing.T) {
	var st childset.Status
	r, err := childsetcr.SetupWithManager[*appsv1.ReplicaSet, *corev1.Pod](unstartedManager(t), rollingSpec{statusSpec{last: &st}}, podKind{})
	require.NoError(t, err)
	require.NotNil(t, r.Core())
}

func podNameSet(t *testing.T, c client.Client) map[string]bool {
	t.Helper()
	var pods corev1.PodList
	require.NoError(t, c.List(context.Background(), &pods))
	out := map[string]bool{}
	for _, p := range pods.Items {
		out[p.Name] = true
	}
	return out
}

func podHashes(t *testing.T, c client.Client) map[string]int {
	t.Helper()
	var pods corev1.PodList
	require.NoError(t, c.List(context.Background(), &pods))
	out := map[string]int{}
	for _, p := range pods.Items {
		out[p.Labels[history.ControllerRevisionHashLabel]]++
	}
	return out
}

func total(m map[string]int) (n int) {
	for _, v := range m {
		n += v
	}
	return n
}
