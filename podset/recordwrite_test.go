package podset

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// A pod write reported through RecordPodWrite, as a pod control supplied
// with WithPodControl reports it, defers the owner's next sync until the
// pod informer has applied that write.
func TestRecordPodWriteDefersTheOwnersSync(t *testing.T) {
	rs := newRS("foobar", 0, fooBar)
	e, _ := guardedEnv(t, rs)
	pods := &fakeStore{}
	pods.rv.Store("10")
	e.c.guard = consistency.NewGuard(consistency.WithStore(podGroupResource, pods))
	require.NoError(t, e.sync(rs), "nothing written yet")

	pod := newPod("made", rs, "", fooBar, true)
	pod.ResourceVersion = "25"
	e.c.RecordPodWrite(pod, metav1.GetControllerOf(pod))
	require.ErrorIs(t, e.sync(rs), consistency.ErrStaleCache, "the pod informer is at 10, the write at 25")
	pods.rv.Store("25")
	require.NoError(t, e.sync(rs), "the informer caught up")

	e.c.RecordPodWrite(nil, nil) // nothing to record
	e.c.RecordPodWrite(pod, nil)
	require.NoError(t, e.sync(rs))

	off, _ := guardedEnv(t, rs, WithReadYourWrites(false))
	off.c.RecordPodWrite(pod, metav1.GetControllerOf(pod))
	require.NoError(t, off.sync(rs), "the guard is off")
}

// New needs a client only for what it would write with it: pods and events.
func TestNewWithoutAClient(t *testing.T) {
	ctx := context.Background()
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	owners := factory.Apps().V1().ReplicaSets().Informer()
	kind := rsKind{indexer: owners.GetIndexer()}
	_, err := New(ctx, nil, factory.Core().V1().Pods(), owners, Kind[*appsv1.ReplicaSet](kind),
		WithPodControl(&podcontrol.FakePodControl{}))
	assert.ErrorContains(t, err, "needs a client", "events would need one")
	c, err := New(ctx, nil, factory.Core().V1().Pods(), owners, Kind[*appsv1.ReplicaSet](kind),
		WithPodControl(&podcontrol.FakePodControl{}), WithEventRecorder(record.NewFakeRecorder(10)))
	require.NoError(t, err)
	assert.NotNil(t, c)
}
