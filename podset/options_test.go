package podset

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// TestOptionsPanicOnImpossibleValues: a value that can never be right is a
// programmer error, reported at the With* call with the option's name and
// the package that defines it: the set core's shared options are
// childset's.
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
		msg := panicMessage(t, build)
		assert.True(t, strings.Contains(msg, "podset: "+name+": ") || strings.Contains(msg, "childset: "+name+": "), "%s: %s", name, msg)
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
	assert.Equal(t, clock.RealClock{}, cfg.clock)
	assert.Nil(t, cfg.podControl)
	assert.Nil(t, cfg.onScaleDown)
	assert.Nil(t, cfg.syncMetrics)
	require.NotNil(t, cfg.gates)
	assert.True(t, cfg.gates(PodDeletionCost))

	WithWriteTimeout(time.Second)(&cfg)
	assert.Equal(t, time.Second, cfg.writeTimeout)
	assert.Equal(t, DefaultWriteTimeout, newConfig(nil).writeTimeout)

	e := newEnv(t, nil, nil, WithWorkers(2))
	assert.Equal(t, 2, e.c.Workers())
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
	// Without the option, Run records on New's own broadcaster, through
	// the client: a refused spec's Warning reaches the API.
	rs := newRS("foobar", 1, fooBar)
	rs.Spec.Template.Labels = map[string]string{"foo": "baz"}
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	client := fake.NewSimpleClientset(rs)
	f := informers.NewSharedInformerFactory(client, 0)
	rsInf := f.Apps().V1().ReplicaSets().Informer()
	kind := Kind[*appsv1.ReplicaSet](rsKind{client: client, indexer: rsInf.GetIndexer()})
	own, err := New(ctx, client, f.Core().V1().Pods(), rsInf, kind, WithPodControl(&podcontrol.FakePodControl{}),
		WithEventSource("rs-controller"), WithReadYourWrites(nil))
	require.NoError(t, err)
	f.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- own.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done); f.Shutdown() }()
	require.Eventually(t, func() bool {
		events, err := client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, ev := range events.Items {
			if ev.Source.Component == "rs-controller" && ev.Reason == childset.ReasonSelectorMismatch {
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "the refusal is recorded by New's own broadcaster")

	// nil records none, in New and in NewReconciler (which panics without
	// the option).
	cfg := newConfig([]Option{WithEventRecorder(nil)})
	assert.True(t, cfg.recorderSet)
	assert.Equal(t, noEvents{}, cfg.recorder)
	build(WithEventRecorder(nil))
	_, rctx := ktesting.NewTestContext(t)
	rf := informers.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
	rrsInf := rf.Apps().V1().ReplicaSets().Informer()
	rkind := Kind[*appsv1.ReplicaSet](rsKind{indexer: rrsInf.GetIndexer()})
	_, err = NewReconciler(rctx, rf.Core().V1().Pods(), rrsInf, rkind, WithPodControl(&podcontrol.FakePodControl{}), WithEventRecorder(nil))
	require.NoError(t, err)
}

func TestNewCorePanicsOnANilRead(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	assert.PanicsWithValue(t, "podset: NewCore: a nil read", func() {
		_, _ = NewCore(ctx, Reads[*appsv1.ReplicaSet]{}, Kind[*appsv1.ReplicaSet](rsKind{}),
			WithPodControl(&podcontrol.FakePodControl{}), WithEventRecorder(nil))
	})
}
