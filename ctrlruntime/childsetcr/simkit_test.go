package childsetcr_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/simkit"
)

// Under simkit a controller set up with the manager adopts a matching
// orphan instead of creating a child: the live read before the adoption
// goes through the manager's API reader, which is the kit's. The previous
// manager's API reader dialled 127.0.0.1:1, so every adoption failed (and,
// with no logger, silently): the pool kept zero children.
func TestAdoptsAnOrphanUnderSimkit(t *testing.T) {
	kit, err := simkit.New(newScheme(t), simkit.WithLogger(simkit.TestLogger(t)))
	require.NoError(t, err)
	mgr, err := kit.NewManager(manager.Options{})
	require.NoError(t, err)
	_, err = childsetcr.SetupWithManager[*appsv1.ReplicaSet, *corev1.Pod](mgr, rsSpec{}, podKind{},
		childsetcr.WithName("simkit-adopt"))
	require.NoError(t, err)
	ctx := simkit.StartManagerTest(t, mgr)

	c := mgr.GetClient()
	orphan := pod("ns", "orphan", "", "pool", nil, "")
	orphan.Spec.Containers = []corev1.Container{{Name: "c", Image: "i"}}
	require.NoError(t, c.Create(ctx, orphan))
	pool := replicaSet("pool", 1, "pool")
	pool.UID, pool.TypeMeta = "", metav1.TypeMeta{}
	require.NoError(t, c.Create(ctx, pool))

	api := mgr.GetAPIReader()
	var pods corev1.PodList
	require.Eventually(t, func() bool {
		var stored corev1.Pod
		if err := api.Get(ctx, client.ObjectKeyFromObject(orphan), &stored); err != nil {
			return false
		}
		ref := metav1.GetControllerOf(&stored)
		return ref != nil && ref.UID == pool.UID
	}, 30*time.Second, 10*time.Millisecond, "the orphan is never adopted")
	// Adopted, not doubled: the one child is the orphan.
	require.NoError(t, api.List(ctx, &pods, client.InNamespace("ns")))
	require.Len(t, pods.Items, 1)
	assert.Equal(t, "orphan", pods.Items[0].Name)
}
