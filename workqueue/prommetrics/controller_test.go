package prommetrics

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/podcontrol"
)

func TestControllerMetricsScrape(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewControllerMetrics(reg)
	require.NoError(t, err)
	m.ObserveSync("ReplicaSet", 20*time.Millisecond, nil)
	m.ObserveSync("ReplicaSet", 30*time.Millisecond, errors.New("boom"))
	m.ObserveSync("ReplicationController", time.Millisecond, nil)
	m.ObserveDeletionAgeRatio(1.5)
	m.ObserveDeletionAgeRatio(3)

	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	families := decodeFamilies(t, resp)

	got := map[string]float64{}
	for _, s := range families[ReconcileTotalName].GetMetric() {
		key := ""
		for _, l := range s.GetLabel() {
			key += l.GetName() + "=" + l.GetValue() + ","
		}
		got[key] = s.GetCounter().GetValue()
	}
	require.Equal(t, map[string]float64{
		"controller=replicaset,result=success,":            1,
		"controller=replicaset,result=error,":              1,
		"controller=replicationcontroller,result=success,": 1,
	}, got)
	require.Equal(t, 1.0, testutil.ToFloat64(m.syncErrors.WithLabelValues("replicaset")))

	ratio := families[DeletionAgeRatioName].GetMetric()[0].GetHistogram()
	require.EqualValues(t, 2, ratio.GetSampleCount())
	require.InDelta(t, 4.5, ratio.GetSampleSum(), 1e-9)
	var bounds []float64
	for _, b := range ratio.GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
	}
	require.Equal(t, []float64{0.25, 0.5, 1, 2, 4, 8}, bounds[:6], "upstream's buckets")
	require.NotNil(t, families[ReconcileTimeName])

	// A second set on the same registry shares the first's series.
	again, err := NewControllerMetrics(reg)
	require.NoError(t, err)
	again.ObserveSync("ReplicaSet", time.Millisecond, nil)
	assert.Equal(t, 2.0, testutil.ToFloat64(m.syncs.WithLabelValues("replicaset", ResultSuccess)))
}

// TestStaleCacheSyncIsARequeueNotAFailure: a sync that found the informer
// cache behind the controller's own writes is requeued to wait for it; it
// counts as a requeue, never as a failure.
func TestStaleCacheSyncIsARequeueNotAFailure(t *testing.T) {
	m, err := NewControllerMetrics(prometheus.NewRegistry())
	require.NoError(t, err)
	stale := fmt.Errorf("sync default/web: %w", &consistency.StaleCacheError{})
	require.ErrorIs(t, stale, consistency.ErrStaleCache)
	m.ObserveSync("ReplicaSet", time.Millisecond, nil)
	m.ObserveSync("ReplicaSet", time.Millisecond, stale)
	m.ObserveSync("ReplicaSet", time.Millisecond, stale)
	m.ObserveSync("ReplicaSet", time.Millisecond, errors.New("pods is forbidden"))

	assert.Equal(t, 1.0, testutil.ToFloat64(m.syncs.WithLabelValues("replicaset", ResultSuccess)))
	assert.Equal(t, 2.0, testutil.ToFloat64(m.syncs.WithLabelValues("replicaset", ResultRequeue)))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.syncs.WithLabelValues("replicaset", ResultError)))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.syncErrors.WithLabelValues("replicaset")), "only the real error is a failure")
}

// TestRecordPodWrites: only successful creates and deletes count, per
// controller, and every event still reaches the real recorder.
func TestRecordPodWrites(t *testing.T) {
	m, err := NewControllerMetrics(prometheus.NewRegistry())
	require.NoError(t, err)
	fake := record.NewFakeRecorder(10)
	r := m.RecordPodWrites(fake, "replicationcontroller")
	owner := &v1.ReplicationController{}

	r.Eventf(owner, v1.EventTypeNormal, podcontrol.SuccessfulCreatePodReason, "Created pod: %v", "a")
	r.Event(owner, v1.EventTypeNormal, podcontrol.SuccessfulCreatePodReason, "Created pod: b")
	r.AnnotatedEventf(owner, nil, v1.EventTypeNormal, podcontrol.SuccessfulDeletePodReason, "Deleted pod: %v", "a")
	r.Eventf(owner, v1.EventTypeWarning, podcontrol.FailedCreatePodReason, "Error creating: %v", "quota")
	r.Eventf(owner, v1.EventTypeWarning, podcontrol.FailedDeletePodReason, "Error deleting: %v", "boom")
	r.Eventf(owner, v1.EventTypeWarning, "SelectorInvalid", "Invalid selector")

	assert.Equal(t, 2.0, testutil.ToFloat64(m.podsCreated.WithLabelValues("replicationcontroller")))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.podsDeleted.WithLabelValues("replicationcontroller")))
	assert.Equal(t, 1, testutil.CollectAndCount(m.podsCreated), "one series: the recorder's controller only")
	close(fake.Events)
	var got []string
	for e := range fake.Events {
		got = append(got, e)
	}
	assert.Equal(t, []string{
		"Normal SuccessfulCreate Created pod: a",
		"Normal SuccessfulCreate Created pod: b",
		"Normal SuccessfulDelete Deleted pod: a",
		"Warning FailedCreate Error creating: quota",
		"Warning FailedDelete Error deleting: boom",
		"Warning SelectorInvalid Invalid selector",
	}, got)
}

func TestResetGauges(t *testing.T) {
	p, err := NewProvider(prometheus.NewRegistry())
	require.NoError(t, err)
	p.NewDepthMetric("q").Inc()
	p.NewUnfinishedWorkSecondsMetric("q").Set(3)
	p.NewLongestRunningProcessorSecondsMetric("q").Set(2)
	p.ResetGauges("q")
	for _, g := range []*prometheus.GaugeVec{p.depth, p.unfinishedWork, p.longestRunning} {
		assert.Zero(t, testutil.ToFloat64(g.WithLabelValues("q")))
	}
}
