package childsetcr_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
)

const drainLabel = "test.ctrlkit.io/drain"

// gatedSpec is rsSpec with a deletion gate, whose marked pods the Spec
// releases itself once they are annotated drained.
type gatedSpec struct{ rsSpec }

func (gatedSpec) DeletionGate(*appsv1.ReplicaSet) childset.DeletionGate {
	return childset.DeletionGate{Label: drainLabel, Timeout: time.Hour}
}

func (gatedSpec) DeletionReleased(_ *appsv1.ReplicaSet, p *corev1.Pod) bool {
	return p.Annotations["drained"] == "true"
}

// describedGateSpec gives the same gate through its Describe.
type describedGateSpec struct{ rsSpec }

func (describedGateSpec) Describe(rs *appsv1.ReplicaSet) childset.Fields {
	return childset.Fields{Replicas: rs.Spec.Replicas, Selector: rs.Spec.Selector,
		DeletionGate: childset.DeletionGate{Label: drainLabel, Timeout: time.Hour}}
}

// readyPod is a ready pod of rs, named name.
func readyPod(rs *appsv1.ReplicaSet, name string) *corev1.Pod {
	p := pod("ns", name, "", "web", rs, "ReplicaSet")
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	return p
}

// A Spec without Get keeps its deletion gate, whichever shape gives it: a
// scale-in through the host marks its victim and deletes nothing until the
// victim is released, by the Spec's DeletionReleaser or by its label.
func TestNewCoreHoldsDeletionsAtTheSpecsGate(t *testing.T) {
	for name, tc := range map[string]struct {
		spec    childsetcr.Spec[*appsv1.ReplicaSet, *corev1.Pod]
		release func(*corev1.Pod)
	}{
		"getters and releaser": {gatedSpec{}, func(p *corev1.Pod) { p.Annotations["drained"] = "true" }},
		"describe":             {describedGateSpec{}, func(p *corev1.Pod) { delete(p.Labels, drainLabel) }},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			rs := replicaSet("web", 1, "web")
			deletes := 0
			c := fakeClient(t, interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				deletes++
				return c.Delete(ctx, obj, opts...)
			}}, rs, readyPod(rs, "web-a"), readyPod(rs, "web-b"))
			core, err := childsetcr.NewCore(c, nil, nil, tc.spec, podKind{})
			require.NoError(t, err)
			r := childsetcr.NewReconciler(core)

			for range 2 {
				res, err := r.Reconcile(ctx, request("web"))
				require.NoError(t, err)
				assert.Positive(t, res.RequeueAfter, "held until the gate's timeout at most")
				assert.LessOrEqual(t, res.RequeueAfter, time.Hour)
			}
			assert.Zero(t, deletes, "nothing deleted while the gate holds")
			pods := &corev1.PodList{}
			require.NoError(t, c.List(ctx, pods, client.InNamespace("ns")))
			require.Len(t, pods.Items, 2)
			var victim *corev1.Pod
			for i := range pods.Items {
				if pods.Items[i].Labels[drainLabel] == childset.DeletionGatePending {
					require.Nil(t, victim, "one victim for one replica too many")
					victim = &pods.Items[i]
				}
			}
			require.NotNil(t, victim, "the victim carries the gate's label")
			assert.Contains(t, victim.Annotations, childset.DeletionRequestedAnnotation)

			tc.release(victim)
			require.NoError(t, c.Update(ctx, victim))
			_, err = r.Reconcile(ctx, request("web"))
			require.NoError(t, err)
			assert.Equal(t, 1, deletes)
			err = c.Get(ctx, client.ObjectKeyFromObject(victim), &corev1.Pod{})
			assert.True(t, client.IgnoreNotFound(err) == nil && err != nil, "the released victim is deleted: %v", err)
		})
	}
}

// A Spec without a gate deletes at once through the host, as the core does
// for a Spec that is no DeletionGateSpec: the host's wrapper answers no
// gate for it.
func TestNewCoreWithoutAGateDeletesAtOnce(t *testing.T) {
	ctx := context.Background()
	rs := replicaSet("web", 1, "web")
	c := fakeClient(t, interceptor.Funcs{}, rs, readyPod(rs, "web-a"), readyPod(rs, "web-b"))
	core, err := childsetcr.NewCore(c, nil, nil, rsSpec{}, podKind{})
	require.NoError(t, err)
	_, err = childsetcr.NewReconciler(core).Reconcile(ctx, request("web"))
	require.NoError(t, err)
	pods := &corev1.PodList{}
	require.NoError(t, c.List(ctx, pods, client.InNamespace("ns")))
	require.Len(t, pods.Items, 1)
	assert.NotContains(t, pods.Items[0].Labels, drainLabel)
	assert.NotContains(t, pods.Items[0].Annotations, childset.DeletionRequestedAnnotation)
}
