package childsetcr_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
	"github.com/ctrlkit/ctrlkit/expectations"
)

// A reconcile creates the missing children through the client, owned by
// the owner; the next one, while the creations are not observed, creates
// nothing and asks controller-runtime to come back when the expectations
// expire.
func TestReconcileCreatesAndMapsRequeueAfter(t *testing.T) {
	ctx := context.Background()
	rs := replicaSet("web", 3, "web")
	c := fakeClient(t, interceptor.Funcs{}, rs)
	clk := clocktesting.NewFakeClock(time.Now())
	core, err := childsetcr.NewCore(c, nil, nil, rsSpec{}, podKind{}, childset.WithClock(clk))
	require.NoError(t, err)
	r := childsetcr.NewReconciler(core)
	require.Same(t, core, r.Core())

	res, err := r.Reconcile(ctx, request("web"))
	require.NoError(t, err)
	assert.Zero(t, res)
	pods := &corev1.PodList{}
	require.NoError(t, c.List(ctx, pods, client.InNamespace("ns")))
	require.Len(t, pods.Items, 3)
	for i := range pods.Items {
		ctrl := metav1.GetControllerOf(&pods.Items[i])
		require.NotNil(t, ctrl)
		assert.Equal(t, rs.UID, ctrl.UID)
		assert.Equal(t, "ReplicaSet", ctrl.Kind)
		assert.Equal(t, "web", pods.Items[i].Labels["app"])
	}
	rep, ok := core.Expectations().Pending(expectations.OwnerKeyFor(rs))
	require.True(t, ok)
	assert.Equal(t, int64(3), rep.Adds, "the three creations are expected until the handler sees them")

	clk.Step(2 * time.Minute)
	res, err = r.Reconcile(ctx, request("web"))
	require.NoError(t, err)
	assert.Equal(t, expectations.ExpectationsTimeout-2*time.Minute+time.Millisecond, res.RequeueAfter, "just past the expiry")
	require.NoError(t, c.List(ctx, pods, client.InNamespace("ns")))
	assert.Len(t, pods.Items, 3, "nothing is created while creations are pending")
}

// A failed write goes back to controller-runtime as an error, with an
// empty result, so that it backs off; a failed read too.
func TestReconcileReturnsErrors(t *testing.T) {
	boom := errors.New("boom")
	for name, funcs := range map[string]interceptor.Funcs{
		"create": {Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return boom }},
		"list": {List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, pods := list.(*corev1.PodList); pods {
				return boom
			}
			return c.List(ctx, list, opts...)
		}},
		"get owner": {Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return boom
		}},
	} {
		t.Run(name, func(t *testing.T) {
			c := fakeClient(t, funcs, replicaSet("web", 2, "web"))
			core, err := childsetcr.NewCore(c, nil, nil, rsSpec{}, podKind{})
			require.NoError(t, err)
			res, err := childsetcr.NewReconciler(core).Reconcile(context.Background(), request("web"))
			require.ErrorIs(t, err, boom)
			assert.Zero(t, res)
		})
	}
}

// An owner that is gone is not an error, and nothing is written.
func TestReconcileOwnerGone(t *testing.T) {
	creates := 0
	c := fakeClient(t, interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		creates++
		return c.Create(ctx, obj, opts...)
	}})
	core, err := childsetcr.NewCore(c, nil, nil, rsSpec{}, podKind{})
	require.NoError(t, err)
	res, err := childsetcr.NewReconciler(core).Reconcile(context.Background(), request("gone"))
	require.NoError(t, err)
	assert.Zero(t, res)
	assert.Zero(t, creates)
}

// Indexed mode through the client: names <owner>-<i>, and a scale-down
// deletes the highest index first.
func TestReconcileIndexed(t *testing.T) {
	ctx := context.Background()
	rs := replicaSet("gang", 3, "gang")
	c := fakeClient(t, interceptor.Funcs{}, rs)
	core, err := childsetcr.NewCore(c, nil, nil, rsSpec{}, podKind{}, childset.WithIndexedNames(nil))
	require.NoError(t, err)
	r := childsetcr.NewReconciler(core)
	_, err = r.Reconcile(ctx, request("gang"))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"gang-0", "gang-1", "gang-2"}, podNames(t, c))

	// Observe the creations, as the handler would, then scale down.
	pods := &corev1.PodList{}
	require.NoError(t, c.List(ctx, pods, client.InNamespace("ns")))
	for i := range pods.Items {
		core.ObserveAdd(&pods.Items[i])
	}
	cur := &appsv1.ReplicaSet{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(rs), cur))
	cur.Spec.Replicas = ptr.To[int32](1)
	require.NoError(t, c.Update(ctx, cur))
	_, err = r.Reconcile(ctx, request("gang"))
	require.NoError(t, err)
	assert.Equal(t, []string{"gang-0"}, podNames(t, c))
}

// A child type the scheme does not know is refused by NewCore.
func TestNewCoreUnknownChildKind(t *testing.T) {
	c := fakeClient(t, interceptor.Funcs{})
	_, err := childsetcr.NewCore[*appsv1.ReplicaSet, *widget](c, nil, nil, widgetSpec{}, widgetKind{})
	require.ErrorContains(t, err, "child kind")
}

// widget is a child type no scheme registers.
type widget struct{ corev1.ConfigMap }

type widgetSpec struct{ rsSpec }

func (widgetSpec) NewChild(*appsv1.ReplicaSet) (*widget, error) { return &widget{}, nil }

type widgetKind struct{}

func (widgetKind) Ready(*widget) bool { return true }

func podNames(t *testing.T, c client.Client) []string {
	t.Helper()
	pods := &corev1.PodList{}
	require.NoError(t, c.List(context.Background(), pods, client.InNamespace("ns")))
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	return names
}
