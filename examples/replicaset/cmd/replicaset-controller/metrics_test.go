package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctrlkit/ctrlkit/consistency"
)

func TestMetricsScrape(t *testing.T) {
	m, err := newControllerMetrics()
	require.NoError(t, err)
	m.ObserveSync("ReplicaSet", 20*time.Millisecond, nil)
	m.ObserveSync("ReplicaSet", 30*time.Millisecond, errors.New("boom"))
	m.ObserveSync("ReplicationController", time.Millisecond, nil)
	m.ObserveDeletionAgeRatio(1.5)
	m.ObserveDeletionAgeRatio(3)
	q := m.queue.NewAddsMetric("replicaset")
	q.Inc()

	srv := httptest.NewServer(m.handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	families := decodeFamilies(t, resp)

	total := families["controller_runtime_reconcile_total"]
	require.NotNil(t, total)
	got := map[string]float64{}
	for _, s := range total.GetMetric() {
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

	ratio := families["replicaset_controller_sorting_deletion_age_ratio"].GetMetric()[0].GetHistogram()
	require.EqualValues(t, 2, ratio.GetSampleCount())
	require.InDelta(t, 4.5, ratio.GetSampleSum(), 1e-9)
	var bounds []float64
	for _, b := range ratio.GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
	}
	require.Equal(t, []float64{0.25, 0.5, 1, 2, 4, 8}, bounds[:6])
	require.NotNil(t, families["workqueue_adds_total"])
	require.NotNil(t, families["controller_runtime_reconcile_time_seconds"])
}

// TestMetricsSummary: the demo's last line reads every figure back from the
// registry.
func TestMetricsSummary(t *testing.T) {
	m, err := newControllerMetrics()
	require.NoError(t, err)
	assert.Equal(t, "0 syncs (0 requeued to wait for the cache, 0 failed), 0 pods created, 0 pods deleted, 0 queue adds, 0 retries, deletion-age ratio: none observed", m.summary())

	m.ObserveSync("ReplicaSet", time.Millisecond, nil)
	m.ObserveSync("ReplicaSet", time.Millisecond, errors.New("boom"))
	m.ObserveSync("ReplicationController", time.Millisecond, nil)
	m.ObserveDeletionAgeRatio(1)
	m.ObserveDeletionAgeRatio(2)
	for range 3 {
		m.podsCreated.WithLabelValues(kindReplicaSet).Inc()
	}
	m.podsCreated.WithLabelValues(kindReplicationController).Inc()
	m.podsDeleted.WithLabelValues(kindReplicaSet).Inc()
	adds, retries := m.queue.NewAddsMetric("replicaset"), m.queue.NewRetriesMetric("replicaset")
	for range 5 {
		adds.Inc()
	}
	retries.Inc()
	assert.Equal(t, "3 syncs (0 requeued to wait for the cache, 1 failed), 4 pods created, 1 pods deleted, 5 queue adds, 1 retries, deletion-age ratio: 2 observed, mean 1.50", m.summary())
}

// TestStaleCacheSyncIsARequeueNotAFailure: a sync that found the informer
// cache behind the controller's own writes is requeued to wait for it; the
// scrape and the demo's summary count it as a requeue, never as a failure.
func TestStaleCacheSyncIsARequeueNotAFailure(t *testing.T) {
	m, err := newControllerMetrics()
	require.NoError(t, err)
	stale := fmt.Errorf("sync default/web: %w", &consistency.StaleCacheError{})
	require.ErrorIs(t, stale, consistency.ErrStaleCache)
	m.ObserveSync("ReplicaSet", time.Millisecond, nil)
	m.ObserveSync("ReplicaSet", time.Millisecond, stale)
	m.ObserveSync("ReplicaSet", time.Millisecond, stale)
	m.ObserveSync("ReplicaSet", time.Millisecond, errors.New("pods is forbidden"))

	assert.Equal(t, 1.0, testutil.ToFloat64(m.syncs.WithLabelValues("replicaset", "success")))
	assert.Equal(t, 2.0, testutil.ToFloat64(m.syncs.WithLabelValues("replicaset", "requeue")))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.syncs.WithLabelValues("replicaset", "error")))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.syncErrors.WithLabelValues("replicaset")), "only the real error is a failure")
	assert.True(t, strings.HasPrefix(m.summary(), "4 syncs (2 requeued to wait for the cache, 1 failed),"), m.summary())
}

// decodeFamilies reads an exposition in the format the response names. The
// decoder, unlike the text parser's constructors, has the same signature in
// every prometheus/common release the module's range of dependencies allows.
func decodeFamilies(t *testing.T, resp *http.Response) map[string]*dto.MetricFamily {
	t.Helper()
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	families := map[string]*dto.MetricFamily{}
	for {
		f := &dto.MetricFamily{}
		err := dec.Decode(f)
		if errors.Is(err, io.EOF) {
			return families
		}
		require.NoError(t, err)
		families[f.GetName()] = f
	}
}
