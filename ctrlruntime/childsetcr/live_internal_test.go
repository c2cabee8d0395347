package childsetcr

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/status"
)

type rsOnly struct{}

func (rsOnly) GroupVersionKind() schema.GroupVersionKind {
	return appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
}
func (rsOnly) Replicas(*appsv1.ReplicaSet) int32                    { return 1 }
func (rsOnly) Selector(*appsv1.ReplicaSet) (labels.Selector, error) { return labels.Everything(), nil }
func (rsOnly) NewChild(*appsv1.ReplicaSet) (*corev1.Pod, error)     { return &corev1.Pod{}, nil }

// The spec SetupWithManager builds reads owners from the cache and, for the
// core's check before an adoption, from the live reader.
func TestLiveSpecReadsTheLiveReader(t *testing.T) {
	cached := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "old"}}
	live := cached.DeepCopy()
	live.UID = "new"
	spec := liveSpec[*appsv1.ReplicaSet, *corev1.Pod]{
		cachedSpec[*appsv1.ReplicaSet, *corev1.Pod]{Spec: rsOnly{}, fields: getterFields[*appsv1.ReplicaSet]{rsOnly{}},
			gvk: rsOnly{}.GroupVersionKind(), reader: fake.NewClientBuilder().WithObjects(cached).Build()},
		fake.NewClientBuilder().WithObjects(live).Build(),
	}
	var _ childset.LiveReader[*appsv1.ReplicaSet] = spec
	got, err := spec.Get("ns", "web")
	require.NoError(t, err)
	assert.EqualValues(t, "old", got.UID)
	got, err = spec.GetLive(context.Background(), "ns", "web")
	require.NoError(t, err)
	assert.EqualValues(t, "new", got.UID)
	_, err = spec.GetLive(context.Background(), "ns", "gone")
	assert.True(t, apierrors.IsNotFound(err))
}

// mustComplete is completeSpec for a ReplicaSet's Spec.
func mustComplete(t *testing.T, spec Spec[*appsv1.ReplicaSet, *corev1.Pod], cache, live client.Reader) childset.Spec[*appsv1.ReplicaSet, *corev1.Pod] {
	t.Helper()
	full, err := completeSpec(spec, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), cache, live, nil)
	require.NoError(t, err)
	return full
}

type rsRolling struct{ rsOnly }

func (rsRolling) RollingUpdate(*appsv1.ReplicaSet) (childset.RollingUpdate, bool) {
	return childset.RollingUpdate{}, true
}

type rsRollingWithHistory struct{ rsRolling }

func (rsRollingWithHistory) RevisionHistoryLimit(*appsv1.ReplicaSet) int32 { return 3 }
func (rsRollingWithHistory) CollisionCount(*appsv1.ReplicaSet) *int32 {
	n := int32(2)
	return &n
}
func (rsRollingWithHistory) Paused(*appsv1.ReplicaSet) bool { return true }
func (rsRollingWithHistory) ProgressDeadlineSeconds(*appsv1.ReplicaSet) *int32 {
	n := int32(60)
	return &n
}
func (rsRollingWithHistory) StoredProgress(*appsv1.ReplicaSet) (status.ProgressCounts, []appsv1.DeploymentCondition) {
	return status.ProgressCounts{Replicas: 4}, []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing}}
}

// The host's wrapper keeps a rolling Spec's optional history limit and
// collision count, and answers for a Spec without them as the core would.
func TestCompleteSpecForwardsTheRolloutOptions(t *testing.T) {
	reader := fake.NewClientBuilder().Build()
	with := mustComplete(t, rsRollingWithHistory{}, reader, nil)
	require.Implements(t, (*childset.HistoryLimitSpec[*appsv1.ReplicaSet])(nil), with)
	assert.EqualValues(t, 3, with.(childset.HistoryLimitSpec[*appsv1.ReplicaSet]).RevisionHistoryLimit(nil))
	assert.EqualValues(t, 2, *with.(childset.CollisionCountSpec[*appsv1.ReplicaSet]).CollisionCount(nil))
	without := mustComplete(t, rsRolling{}, reader, nil)
	assert.EqualValues(t, childset.DefaultRevisionHistoryLimit, without.(childset.HistoryLimitSpec[*appsv1.ReplicaSet]).RevisionHistoryLimit(nil))
	assert.Nil(t, without.(childset.CollisionCountSpec[*appsv1.ReplicaSet]).CollisionCount(nil))

	assert.True(t, with.(childset.PauseSpec[*appsv1.ReplicaSet]).Paused(nil))
	assert.False(t, without.(childset.PauseSpec[*appsv1.ReplicaSet]).Paused(nil))
	progress := with.(childset.ProgressSpec[*appsv1.ReplicaSet])
	assert.EqualValues(t, 60, *progress.ProgressDeadlineSeconds(nil))
	counts, conds := progress.StoredProgress(nil)
	assert.EqualValues(t, 4, counts.Replicas)
	assert.Len(t, conds, 1)
	assert.Nil(t, without.(childset.ProgressSpec[*appsv1.ReplicaSet]).ProgressDeadlineSeconds(nil))
	counts, conds = without.(childset.ProgressSpec[*appsv1.ReplicaSet]).StoredProgress(nil)
	assert.Zero(t, counts)
	assert.Nil(t, conds)
}

type rsNaming struct{ rsOnly }

func (rsNaming) ChildrenToDeleteFirst(*appsv1.ReplicaSet) []string { return []string{"web-1"} }

// The host's wrapper keeps a Spec's names to delete first, and names
// nothing for a Spec without them, as the core would read it.
func TestCompleteSpecForwardsTheNamesToDeleteFirst(t *testing.T) {
	reader := fake.NewClientBuilder().Build()
	for _, spec := range []Spec[*appsv1.ReplicaSet, *corev1.Pod]{rsNaming{}, rsRolling{}} {
		for _, live := range []*fake.ClientBuilder{nil, fake.NewClientBuilder()} {
			var liveReader client.Reader
			if live != nil {
				liveReader = live.Build()
			}
			full := mustComplete(t, spec, reader, liveReader)
			require.Implements(t, (*childset.ScaleInSpec[*appsv1.ReplicaSet])(nil), full)
			got := full.(childset.ScaleInSpec[*appsv1.ReplicaSet]).ChildrenToDeleteFirst(nil)
			if _, names := spec.(childset.ScaleInSpec[*appsv1.ReplicaSet]); names {
				assert.Equal(t, []string{"web-1"}, got)
			} else {
				assert.Nil(t, got)
			}
		}
	}
}

type rsGated struct{ rsRolling }

func (rsGated) DeletionGate(*appsv1.ReplicaSet) childset.DeletionGate {
	return childset.DeletionGate{Label: "drain", Timeout: time.Minute}
}
func (rsGated) DeletionReleased(*appsv1.ReplicaSet, *corev1.Pod) bool { return true }

// The host's wrappers, with or without a live reader, rolling or not, keep
// a Spec's deletion gate and releaser, and answer for a Spec without them
// as the core reads one: no gate, nothing released.
func TestCompleteSpecForwardsTheDeletionGate(t *testing.T) {
	reader := fake.NewClientBuilder().Build()
	for _, spec := range []Spec[*appsv1.ReplicaSet, *corev1.Pod]{rsGated{}, rsRolling{}, rsOnly{}} {
		for _, live := range []client.Reader{nil, fake.NewClientBuilder().Build()} {
			full := mustComplete(t, spec, reader, live)
			require.Implements(t, (*childset.DeletionGateSpec[*appsv1.ReplicaSet])(nil), full)
			require.Implements(t, (*childset.DeletionReleaser[*appsv1.ReplicaSet, *corev1.Pod])(nil), full)
			gate := full.(childset.DeletionGateSpec[*appsv1.ReplicaSet]).DeletionGate(nil)
			released := full.(childset.DeletionReleaser[*appsv1.ReplicaSet, *corev1.Pod]).DeletionReleased(nil, nil)
			if _, gated := spec.(rsGated); gated {
				assert.Equal(t, childset.DeletionGate{Label: "drain", Timeout: time.Minute}, gate)
				assert.True(t, released)
			} else {
				assert.Zero(t, gate)
				assert.False(t, released)
			}
		}
	}
}
