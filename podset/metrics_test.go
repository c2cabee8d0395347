package podset

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// recordingMetrics keeps what the controller reported.
type recordingMetrics struct {
	mu     sync.Mutex
	syncs  []error
	kinds  []string
	ratios []float64
}

func (m *recordingMetrics) ObserveSync(kind string, _ time.Duration, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.kinds = append(m.kinds, kind)
	m.syncs = append(m.syncs, err)
}

func (m *recordingMetrics) ObserveDeletionAgeRatio(r float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ratios = append(m.ratios, r)
}

func TestMetricsObserveSync(t *testing.T) {
	m := &recordingMetrics{}
	e := newEnv(t, nil, WithMetrics(m))
	e.c.Queue().Add("default/missing")
	require.True(t, e.c.ProcessNextWorkItem(e.ctx))
	require.Equal(t, []string{"ReplicaSet"}, m.kinds)
	require.Equal(t, []error{nil}, m.syncs) // a deleted owner is a successful sync
}

// The core reports its syncs itself, so a host that drives it (podsetcr)
// gets the same measurements as New's driver.
func TestMetricsObserveSyncWithoutTheDriver(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewSimpleClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	rsInf := f.Apps().V1().ReplicaSets().Informer()
	kind := Kind[*appsv1.ReplicaSet](rsKind{client: client, indexer: rsInf.GetIndexer()})
	m := &recordingMetrics{}
	r, err := NewReconciler(ctx, f.Core().V1().Pods(), rsInf, kind, WithPodControl(&podcontrol.FakePodControl{}),
		WithEventRecorder(nil), WithMetrics(m))
	require.NoError(t, err)
	_, err = r.Reconcile(ctx, "default/missing")
	require.NoError(t, err)
	// A malformed key can never be synced: it is logged and dropped.
	_, err = r.Reconcile(ctx, "not/a/key")
	require.NoError(t, err)
	require.Equal(t, []string{"ReplicaSet", "ReplicaSet"}, m.kinds)
	require.Equal(t, []error{nil, nil}, m.syncs)
}

func agedPod(name string, now time.Time, age time.Duration, ready bool) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: uuid.NewUUID(), CreationTimestamp: metav1.NewTime(now.Add(-age))}}
	p.Status.Phase = v1.PodRunning
	if ready {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}
	}
	return p
}

func TestDeletionAgeRatio(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := &recordingMetrics{}
	c := podSpec[*v1.Pod]{cfg: &config{clock: testingclock.NewFakeClock(now), syncMetrics: m}}
	young := agedPod("young", now, 2*time.Second, true)
	mid := agedPod("mid", now, 3*time.Second, true)
	old := agedPod("old", now, 8*time.Second, true)
	newest := agedPod("newest", now, time.Second, false) // not Ready: neither youngest nor observed
	c.observeDeletionAgeRatio([]*v1.Pod{young, mid, old, newest}, []*v1.Pod{mid, old, newest})
	// Upstream's integer division would report 1 for mid, not 1.5.
	require.Equal(t, []float64{1.5, 4}, m.ratios)
}

func TestDeletionAgeRatioNeverDividesByZero(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := &recordingMetrics{}
	c := podSpec[*v1.Pod]{cfg: &config{clock: testingclock.NewFakeClock(now), syncMetrics: m}}
	justNow := agedPod("now", now, 0, true)
	older := agedPod("older", now, time.Second, true)
	c.observeDeletionAgeRatio([]*v1.Pod{justNow, older}, []*v1.Pod{older})
	c.observeDeletionAgeRatio([]*v1.Pod{agedPod("unready", now, time.Second, false)}, nil)
	require.Empty(t, m.ratios)
}

func TestScaleDownObservesDeletionAgeRatio(t *testing.T) {
	m := &recordingMetrics{}
	rs := newRS("rs", 1, map[string]string{"app": "a"})
	e := newEnv(t, []runtime.Object{rs}, WithMetrics(m))
	e.addOwner(rs)
	e.addPods(newPods(3, "p", rs, v1.PodRunning, map[string]string{"app": "a"}, true)...)
	require.NoError(t, e.sync(rs))
	e.requireCounts(0, 2, 0)
	require.Len(t, m.ratios, 2)
}
