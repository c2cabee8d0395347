package workerset_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/workerset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/simkit"
)

// With the Worker cache held back, the reconciles the WorkerSet's events
// start (its status writes, a touch) see none of the Workers made, and
// still make no more than three: childset's expectations hold the set.
func TestWorkerSetOnALaggingCache(t *testing.T) {
	kit, ctx := simkit.ManagerTest(t, workerset.AddToScheme, func(mgr manager.Manager) error {
		_, err := workerset.SetupWithManager(mgr)
		return err
	}, simkit.WithStatusSubresource(&workerset.WorkerSet{}))
	release := kit.HoldWatches(&workerset.Worker{})
	set := newSet(3)
	set.UID = ""
	require.NoError(t, kit.Client().Create(ctx, set))
	made := func() int { var l workerset.WorkerList; _ = kit.APIReader().List(ctx, &l); return len(l.Items) }
	require.Eventually(t, func() bool { return made() == 3 }, 30*time.Second, 5*time.Millisecond)
	touch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"touched":"yes"}}}`))
	require.NoError(t, kit.Client().Patch(ctx, set, touch))
	time.Sleep(300 * time.Millisecond) // the reconciles the touch and the status writes start
	assert.Equal(t, 3, made(), "while the cache lags")
	release()
	require.Eventually(t, func() bool {
		return kit.Client().Get(ctx, client.ObjectKeyFromObject(set), set) == nil && set.Status.Replicas == 3
	}, 30*time.Second, 5*time.Millisecond)
	assert.Equal(t, 3, made(), "once it caught up")
}
