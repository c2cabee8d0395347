package childsetcr_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
)

// unstartedManager is a manager that never talks to an API server: the
// tests only register controllers with it.
func unstartedManager(t *testing.T) manager.Manager {
	t.Helper()
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme:  newScheme(t),
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	require.NoError(t, err)
	return mgr
}

// Two controllers with one child kind share the index: the second
// registration is not refused. Controller names stay unique, and the
// controller options reach the builder.
func TestSetupWithManager(t *testing.T) {
	mgr := unstartedManager(t)
	r, err := childsetcr.SetupWithManager[*appsv1.ReplicaSet, *corev1.Pod](mgr, rsSpec{}, podKind{},
		childsetcr.WithName("setup-first"),
		childsetcr.WithChildSetOptions(childset.WithBurstReplicas(10)),
		childsetcr.WithControllerOptions(controller.Options{MaxConcurrentReconciles: 2}))
	require.NoError(t, err)
	require.NotNil(t, r.Core())

	_, err = childsetcr.SetupWithManager[*appsv1.ReplicaSet, *corev1.Pod](mgr, rsSpec{}, podKind{}, childsetcr.WithName("setup-second"))
	require.NoError(t, err, "a second controller over pods reuses the index")

	_, err = childsetcr.SetupWithManager[*appsv1.ReplicaSet, *corev1.Pod](mgr, rsSpec{}, podKind{}, childsetcr.WithName("setup-first"))
	require.ErrorContains(t, err, "setup-first", "controller-runtime refuses a second controller of the same name")

	_, err = childsetcr.SetupWithManager[*appsv1.ReplicaSet, *corev1.Pod](mgr, rsSpec{}, podKind{}, childsetcr.WithName("setup-third"),
		childsetcr.WithControllerOptions(controller.Options{Reconciler: reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{}, nil
		})}))
	require.Error(t, err, "the options reach the builder, which refuses a second reconciler")
}

// The type parameters must be pointers to API structs the scheme knows.
func TestSetupWithManagerRefusesUnknownKinds(t *testing.T) {
	mgr := unstartedManager(t)
	_, err := childsetcr.SetupWithManager[*appsv1.ReplicaSet, *widget](mgr, widgetSpec{}, widgetKind{}, childsetcr.WithName("setup-widget"))
	require.Error(t, err)
	assert.Panics(t, func() {
		_, _ = childsetcr.SetupWithManager[*appsv1.ReplicaSet, *corev1.Pod](mgr, nil, podKind{})
	})
}

// ownedPods is a whole childset.Kind: its own Lister is used, and the
// client's index is not needed.
type ownedPods struct {
	podKind
	pods  []*corev1.Pod
	lists *int
}

func (k ownedPods) ListControlledBy(_ string, ref *metav1.OwnerReference) ([]*corev1.Pod, error) {
	*k.lists++
	if ref == nil {
		return nil, nil
	}
	return k.pods, nil
}

func (k ownedPods) Get(string, string) (*corev1.Pod, bool, error) { return nil, false, nil }

// fixedOwner is a whole childset.Spec: its own Get is used.
type fixedOwner struct {
	rsSpec
	rs *appsv1.ReplicaSet
}

func (s fixedOwner) Get(string, string) (*appsv1.ReplicaSet, error) { return s.rs, nil }

// Adapters that are whole childset adapters read through their own Get and
// Lister, not the client.
func TestNewCoreUsesWholeAdapters(t *testing.T) {
	rs := replicaSet("web", 2, "web")
	// The client holds no ReplicaSet and has no pod index: reading owners
	// or listing children through it would fail.
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).Build()
	lists := 0
	kind := ownedPods{pods: []*corev1.Pod{pod("ns", "mine", "1", "web", rs, "ReplicaSet")}, lists: &lists}
	core, err := childsetcr.NewCore(c, nil, nil, fixedOwner{rs: rs}, kind)
	require.NoError(t, err)
	_, err = childsetcr.NewReconciler(core).Reconcile(context.Background(), request("web"))
	require.NoError(t, err)
	assert.Equal(t, 2, lists, "the owner's children and the orphans")
	pods := &corev1.PodList{}
	require.NoError(t, c.List(context.Background(), pods))
	assert.Len(t, pods.Items, 1, "one pod listed by the kind, one created")
}
