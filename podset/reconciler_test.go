package podset

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// NewReconciler builds the core alone, for a host with its own queue: it
// needs the writer and the recorder New would otherwise make, and panics on
// the options only New's driver applies instead of ignoring them.
func TestNewReconcilerBuildsTheCoreAlone(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	rs := newRS("rs", 2, map[string]string{"app": "a"})
	client := fake.NewSimpleClientset(rs)
	f := informers.NewSharedInformerFactory(client, 0)
	rsInf := f.Apps().V1().ReplicaSets().Informer()
	kind := Kind[*appsv1.ReplicaSet](rsKind{client: client, indexer: rsInf.GetIndexer()})
	pc := &podcontrol.FakePodControl{}
	core := []Option{WithPodControl(pc), WithEventRecorder(record.NewFakeRecorder(10))}

	assert.PanicsWithValue(t, "podset: NewReconciler: no pod writer; give WithPodWriter or WithPodControl", func() {
		_, _ = NewReconciler(ctx, f.Core().V1().Pods(), rsInf, kind, WithEventRecorder(record.NewFakeRecorder(10)))
	})
	assert.PanicsWithValue(t, "podset: NewReconciler: no event recorder; give WithEventRecorder", func() {
		_, _ = NewReconciler(ctx, f.Core().V1().Pods(), rsInf, kind, WithPodControl(pc))
	})
	assert.PanicsWithValue(t, "podset: NewReconciler: WithQueueName, WithMetricsProvider configure New's driver, not the core; set the host's own equivalents", func() {
		_, _ = NewReconciler(ctx, f.Core().V1().Pods(), rsInf, kind, append(core, WithQueueName("q"), WithMetricsProvider(nil))...)
	})
	assert.PanicsWithValue(t, "podset: NewReconciler: WithEventSource configure New's driver, not the core; set the host's own equivalents", func() {
		_, _ = NewReconciler(ctx, f.Core().V1().Pods(), rsInf, kind, append(core, WithEventSource("c"))...)
	})
	assert.Panics(t, func() {
		_, _ = NewReconciler(ctx, f.Core().V1().Pods(), rsInf, kind, append(core, WithReadYourWrites(nil), WithReadYourWritesTTL(time.Second))...)
	}, "no guard of podset's own for the TTL to apply to")

	r, err := NewReconciler(ctx, f.Core().V1().Pods(), rsInf, kind, append(core, WithWorkers(3), WithStaleCachePoll(time.Minute))...)
	require.NoError(t, err)
	assert.Equal(t, 3, r.Workers())
	assert.Equal(t, time.Minute, r.StaleCachePoll())
	require.NoError(t, rsInf.GetIndexer().Add(rs))
	res, err := r.Reconcile(ctx, "default/rs")
	require.NoError(t, err)
	assert.Zero(t, res.RequeueAfter, "creations are expected until observed, with no deadline to meet yet")
	assert.Len(t, pc.Templates, 2, "the core creates the missing pods itself")
	assert.Equal(t, []string{"default/rs"}, r.ObserveAdd(newPod("p", rs, "Running", map[string]string{"app": "a"}, true)))
}
