package podset

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// TestOptionsPanicOnImpossibleValues: a value that can never be right is a
// programmer error, reported at the With* call with the option's name.
func TestOptionsPanicOnImpossibleValues(t *testing.T) {
	for name, build := range map[string]func(){
		"WithBurstReplicas":         func() { WithBurstReplicas(0) },
		"WithWorkers":               func() { WithWorkers(-1) },
		"WithDrainTimeout":          func() { WithDrainTimeout(-time.Second) },
		"WithWriteTimeout":          func() { WithWriteTimeout(0) },
		"WithQueueName":             func() { WithQueueName("") },
		"WithEventSource":           func() { WithEventSource("") },
		"WithReadYourWritesTTL":     func() { WithReadYourWritesTTL(0) },
		"WithStaleCachePoll":        func() { WithStaleCachePoll(-time.Second) },
		"WithUnreachableBackoffCap": func() { WithUnreachableBackoffCap(0) },
	} {
		assert.Contains(t, panicMessage(t, build), "podset: "+name+": ", name)
	}
	assert.Panics(t, func() { WithWriteTimeout(-time.Second) })
}

func panicMessage(t *testing.T, f func()) (msg string) {
	t.Helper()
	defer func() {
		r := recover()
		require.NotNil(t, r, "no panic")
		msg, _ = r.(string)
	}()
	f()
	return ""
}

// TestOptionsNilMeansDefault: nil interface and function values keep the
// documented defaults, but for the recorder and the guard (see
// TestOptionsNilRecorderRecordsNone, TestReadYourWritesGivenGuard), and a
// nil Option is skipped.
func TestOptionsNilMeansDefault(t *testing.T) {
	cfg := newConfig(nil)
	for _, o := range []Option{
		WithClock(nil), WithMetricsProvider(nil), WithPodControl(nil),
		WithScaleDownReporter(nil), WithFeatureGates(nil), WithMetrics(nil),
	} {
		o(&cfg)
	}
	assert.Equal(t, clock.RealClock{}, cfg.Clock)
	assert.Nil(t, cfg.Metrics)
	assert.Nil(t, cfg.podControl)
	assert.Nil(t, cfg.onScaleDown)
	assert.Nil(t, cfg.syncMetrics)
	require.NotNil(t, cfg.gates)
	assert.True(t, cfg.gates(PodDeletionCost))

	WithWriteTimeout(time.Second)(&cfg)
	assert.Equal(t, time.Second, cfg.writeTimeout)
	assert.Equal(t, DefaultWriteTimeout, newConfig(nil).writeTimeout)

	e := newEnv(t, nil, nil, WithWorkers(2))
	assert.Equal(t, 2, e.c.cfg.Workers)
}

// TestOptionsNilRecorderRecordsNone: WithEventRecorder(nil) records no
// events, as in childset; without the option New records upstream's
// events on a broadcaster of its own, named by WithEventSource.
func TestOptionsNilRecorderRecordsNone(t *testing.T) {
	build := func(opts ...Option) *Controller[*appsv1.ReplicaSet] {
		_, ctx := ktesting.NewTestContext(t)
		client := fake.NewSimpleClientset()
		f := informers.NewSharedInformerFactory(client, 0)
		rsInf := f.Apps().V1().ReplicaSets().Informer()
		kind := Kind[*appsv1.ReplicaSet](rsKind{client: client, indexer: rsInf.GetIndexer()})
		c, err := New(ctx, client, f.Core().V1().Pods(), rsInf, kind, append([]Option{WithPodControl(&podcontrol.FakePodControl{})}, opts...)...)
		require.NoError(t, err)
		return c
	}
	own := build(WithEventSource("rs-controller"))
	assert.NotNil(t, own.broadcaster, "no option: New's own broadcaster")
	none := build(WithEventRecorder(nil))
	assert.Nil(t, none.broadcaster, "nil: no broadcaster")
	assert.Equal(t, noEvents{}, none.cfg.recorder, "nil: no events")

	// NewReconciler, which panics without the option, takes nil.
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewSimpleClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	rsInf := f.Apps().V1().ReplicaSets().Informer()
	kind := Kind[*appsv1.ReplicaSet](rsKind{client: client, indexer: rsInf.GetIndexer()})
	r, err := NewReconciler(ctx, f.Core().V1().Pods(), rsInf, kind, WithPodControl(&podcontrol.FakePodControl{}), WithEventRecorder(nil))
	require.NoError(t, err)
	assert.Equal(t, noEvents{}, r.cfg.recorder)
}

func TestNewCorePanicsOnANilRead(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	assert.PanicsWithValue(t, "podset: NewCore: a nil read", func() {
		_, _ = NewCore(ctx, Reads[*appsv1.ReplicaSet]{}, Kind[*appsv1.ReplicaSet](rsKind{}),
			WithPodControl(&podcontrol.FakePodControl{}), WithEventRecorder(nil))
	})
}
