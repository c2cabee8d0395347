package childset_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/history"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// driverRolloutSpec rolls out with fixed bounds and writes no status, so
// the controller's workers share nothing of it.
type driverRolloutSpec struct{ rsSpec }

func (driverRolloutSpec) NewChild(rs *appsv1.ReplicaSet) (*v1.ConfigMap, error) {
	return rolloutTemplate(rs), nil
}

func (driverRolloutSpec) RollingUpdate(*appsv1.ReplicaSet) (childset.RollingUpdate, bool) {
	one, zero := intstr.FromInt32(1), intstr.FromInt32(0)
	return childset.RollingUpdate{MaxSurge: &one, MaxUnavailable: &zero}, true
}

func (driverRolloutSpec) RevisionHistoryLimit(*appsv1.ReplicaSet) int32 { return 5 }
func (driverRolloutSpec) CollisionCount(*appsv1.ReplicaSet) *int32      { return nil }

type alwaysReady struct{ childset.Lister[*v1.ConfigMap] }

func (alwaysReady) Ready(*v1.ConfigMap) bool { return true }

// newRolloutController rolls ReplicaSets out to ConfigMaps over factory's
// informers, its revisions kept through history.NewHistory over revisions,
// whose HasSynced Run waits for.
func newRolloutController(t *testing.T, factory informers.SharedInformerFactory, client kubernetes.Interface, revisions appsinformers.ControllerRevisionInformer) *childset.Controller[*appsv1.ReplicaSet, *v1.ConfigMap] {
	t.Helper()
	rsInformer := factory.Apps().V1().ReplicaSets().Informer()
	cmInformer := factory.Core().V1().ConfigMaps().Informer()
	ctrl, err := childset.New(rsInformer, cmInformer, driverRolloutSpec{rsSpec{rsInformer.GetIndexer()}},
		alwaysReady{childset.IndexerLister[*v1.ConfigMap](cmInformer.GetIndexer())}, configMapControl(client, nil),
		childset.WithRevisions(history.NewHistory(client, revisions.Lister()), revisions.Informer().HasSynced))
	require.NoError(t, err)
	return ctrl
}

// The controller rolls out and back over real informers, its revisions
// kept through history.NewHistory: a revision cache that lags behind the
// core's own writes neither duplicates revisions nor stalls the rollout.
func TestControllerRollsOutAndBack(t *testing.T) {
	cluster := simcluster.New()
	client := cluster.Client()
	e := &env{t: t, cluster: cluster, client: client}
	factory := informers.NewSharedInformerFactory(client, 0)
	ctrl := newRolloutController(t, factory, client, factory.Apps().V1().ControllerRevisions())
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx) }()
	defer func() {
		cancel()
		factory.Shutdown()
		require.NoError(t, <-done)
	}()

	owner := newOwner("web", 4)
	owner.UID = ""
	owner.Spec.Template.Annotations = map[string]string{"version": "v1"}
	_, err := client.AppsV1().ReplicaSets(ns).Create(ctx, owner, metav1.CreateOptions{})
	require.NoError(t, err)
	v1Hash := waitForVersion(t, e, "v1", 4)

	setVersion := func(version string) {
		rs, err := client.AppsV1().ReplicaSets(ns).Get(ctx, "web", metav1.GetOptions{})
		require.NoError(t, err)
		rs.Spec.Template.Annotations["version"] = version
		_, err = client.AppsV1().ReplicaSets(ns).Update(ctx, rs, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	setVersion("v2")
	v2Hash := waitForVersion(t, e, "v2", 4)
	require.NotEqual(t, v1Hash, v2Hash)
	setVersion("v1")
	require.Equal(t, v1Hash, waitForVersion(t, e, "v1", 4), "the rollback reuses the v1 revision's hash")

	list, err := client.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 2, "one revision per template")
}

// waitForVersion waits until the API holds exactly n children, all of
// version, all labelled with one revision hash, and returns that hash.
func waitForVersion(t *testing.T, e *env, version string, n int) string {
	t.Helper()
	var hash string
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		children := e.apiChildren()
		if len(children) != n {
			return false, nil
		}
		hash = children[0].Labels[history.ControllerRevisionHashLabel]
		for _, cm := range children {
			if cm.Data["version"] != version || cm.Labels[history.ControllerRevisionHashLabel] != hash || hash == "" {
				return false, nil
			}
		}
		return true, nil
	})
	require.NoError(t, err, "waiting for %d children at %s", n, version)
	return hash
}

// Run waits for the revision cache WithRevisions names, as for the owner
// and child informers: until it is synced the controller is not ready and
// writes nothing.
func TestControllerWaitsForTheRevisionCache(t *testing.T) {
	cluster := simcluster.New()
	client := cluster.Client()
	e := &env{t: t, cluster: cluster, client: client}
	factory := informers.NewSharedInformerFactory(client, 0)
	// The revisions come from a factory of their own, started later.
	revisionFactory := informers.NewSharedInformerFactory(client, 0)
	ctrl := newRolloutController(t, factory, client, revisionFactory.Apps().V1().ControllerRevisions())
	rsInformer := factory.Apps().V1().ReplicaSets().Informer()
	cmInformer := factory.Core().V1().ConfigMaps().Informer()
	ctx, cancel := context.WithCancel(context.Background())
	owner := newOwner("web", 2)
	owner.UID = ""
	owner.Spec.Template.Annotations = map[string]string{"version": "v1"}
	_, err := client.AppsV1().ReplicaSets(ns).Create(ctx, owner, metav1.CreateOptions{})
	require.NoError(t, err)
	factory.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx) }()
	defer func() {
		cancel()
		factory.Shutdown()
		revisionFactory.Shutdown()
		require.NoError(t, <-done)
	}()

	require.True(t, cache.WaitForCacheSync(ctx.Done(), rsInformer.HasSynced, cmInformer.HasSynced))
	time.Sleep(300 * time.Millisecond)
	require.False(t, ctrl.HasSynced(), "ready before the revision cache synced")
	require.Empty(t, e.apiChildren(), "children written before the revision cache synced")

	revisionFactory.Start(ctx.Done())
	waitForVersion(t, e, "v1", 2)
	require.True(t, ctrl.HasSynced())
}
