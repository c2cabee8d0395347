package replicaset

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/simcluster"
)

// The sweep picks exactly the owners whose status lags their spec, of
// either kind, and nothing it cannot read.
func TestLaggingOwners(t *testing.T) {
	rs := func(name string, replicas *int32, have int32, generation, observed int64) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Generation: generation},
			Spec:       appsv1.ReplicaSetSpec{Replicas: replicas},
			Status:     appsv1.ReplicaSetStatus{Replicas: have, ObservedGeneration: observed},
		}
	}
	rc := &v1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rc", Generation: 3},
		Spec:       v1.ReplicationControllerSpec{Replicas: new(int32(2))},
		Status:     v1.ReplicationControllerStatus{Replicas: 2, ObservedGeneration: 2},
	}
	var got []string
	for _, obj := range []any{
		rs("settled", new(int32(12)), 12, 2, 2),
		rs("unobserved", new(int32(12)), 12, 2, 1),
		rs("short", new(int32(12)), 10, 2, 2),
		rs("over", new(int32(12)), 13, 2, 2),
		rs("nil-replicas", nil, 1, 1, 1),
		rs("nil-replicas-empty", nil, 0, 1, 1),
		rc,
		"not an owner",
	} {
		if lagging(obj) {
			key, err := cache.MetaNamespaceKeyFunc(obj)
			require.NoError(t, err)
			got = append(got, key)
		}
	}
	require.Equal(t, []string{"ns/unobserved", "ns/short", "ns/over", "ns/nil-replicas-empty", "ns/rc"}, got)
}

// The owners a share change brought are handed out before the others: the
// controller's queue must take priorities, so that queueFirst puts an owner
// ahead of those queued before it.
func TestGainedOwnersComeFirst(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cs := simcluster.New().Client()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // stops the controller's event broadcaster
	ctrl, err := New(ctx, ReplicaSets, cs, informers.NewSharedInformerFactory(cs, 0))
	require.NoError(t, err)
	first := queueFirst(ctrl.Queue())
	require.NotNil(t, first, "the controller's queue takes no priorities")
	for i := range 5 {
		ctrl.Queue().Add(fmt.Sprint("default/held", i))
	}
	first("default/gained")
	key, _ := ctrl.Queue().Get()
	require.Equal(t, "default/gained", key)
	ctrl.Queue().ShutDown()
}

func TestKindNames(t *testing.T) {
	for k, want := range map[Kind][2]string{
		ReplicaSets:            {"replicaset", "replicaset-controller"},
		ReplicationControllers: {"replicationmanager", "replication-controller"},
	} {
		assert.True(t, k.Valid())
		assert.Equal(t, want, [2]string{k.QueueName(), k.EventSource()}, k)
	}
	assert.False(t, Kind("ReplicaSet").Valid(), "spelled as the flag spells it")
	rc := ReplicationControllers.Access("team-a")
	assert.Contains(t, fmt.Sprint(rc), `update resource "replicationcontrollers/status" in namespace "team-a"`)
	assert.Contains(t, fmt.Sprint(ReplicaSets.Access("")), `get resource "replicasets" in API group "apps" in all namespaces`)
}
