package podset

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// Pods are written through the writer WithPodWriter gives, wrapped with
// podset's checks and events, unless a whole pod control replaces it.
func TestPodWriterCarriesEveryPodWrite(t *testing.T) {
	// One pod: the plain fake clientset does not fill in generated names.
	rs := newRS("foobar", 1, fooBar)
	w := &countingWriter{PodWriter: podcontrol.ClientsetWriter(fake.NewClientset())}
	e := newEnv(t, []runtime.Object{rs}, WithPodControl(nil), WithPodWriter(w))
	e.addOwner(rs)
	require.NoError(t, e.sync(rs))
	assert.EqualValues(t, 1, w.creates.Load())
	assert.Contains(t, <-e.rec.Events, "SuccessfulCreate", "the writer is wrapped with upstream's events")
}

type countingWriter struct {
	podcontrol.PodWriter
	creates atomic.Int32
}

func (w *countingWriter) Create(ctx context.Context, namespace string, pod *v1.Pod) (*v1.Pod, error) {
	w.creates.Add(1)
	return w.PodWriter.Create(ctx, namespace, pod)
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

// deadlineWriter notes the deadline each delete's context carries.
type deadlineWriter struct {
	podcontrol.PodWriter
	mu        sync.Mutex
	deadlines []time.Time
}

func (w *deadlineWriter) Delete(ctx context.Context, namespace, name string) error {
	d, ok := ctx.Deadline()
	if !ok {
		d = time.Time{}
	}
	w.mu.Lock()
	w.deadlines = append(w.deadlines, d)
	w.mu.Unlock()
	return nil
}

// TestPodWritesGetTheConfiguredTimeout: a write timeout longer than the pod
// control's own default still reaches the writer. Before, the default pod
// control cut every write at its own 30 s, whatever WithWriteTimeout said.
func TestPodWritesGetTheConfiguredTimeout(t *testing.T) {
	rs := newRS("foobar", 1, fooBar)
	w := &deadlineWriter{PodWriter: podcontrol.ClientsetWriter(fake.NewClientset())}
	e := newEnv(t, []runtime.Object{rs}, WithPodControl(nil), WithPodWriter(w), WithWriteTimeout(time.Hour))
	e.addOwner(rs)
	e.addPods(newPods(3, "pod", rs, v1.PodRunning, fooBar, true)...)
	start := time.Now()
	require.NoError(t, e.sync(rs))
	require.Len(t, w.deadlines, 2, "two of three pods deleted")
	for _, d := range w.deadlines {
		assert.WithinDuration(t, start.Add(time.Hour), d, time.Minute, "each delete carries the configured deadline")
	}
}
