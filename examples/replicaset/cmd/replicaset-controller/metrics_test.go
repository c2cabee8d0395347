package main

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// TestMetricsSummary: the demo's last line reads every figure back from the
// registry; a sync that waited for a stale cache is a requeue, not a
// failure.
func TestMetricsSummary(t *testing.T) {
	m, err := newMetrics()
	require.NoError(t, err)
	assert.Equal(t, "0 syncs (0 requeued to wait for the cache, 0 failed), 0 pods created, 0 pods deleted, 0 queue adds, 0 retries, deletion-age ratio: none observed", m.summary())

	m.ObserveSync("ReplicaSet", time.Millisecond, nil)
	m.ObserveSync("ReplicaSet", time.Millisecond, errors.New("boom"))
	m.ObserveSync("ReplicaSet", time.Millisecond, fmt.Errorf("sync default/web: %w", &consistency.StaleCacheError{}))
	m.ObserveSync("ReplicationController", time.Millisecond, nil)
	m.ObserveDeletionAgeRatio(1)
	m.ObserveDeletionAgeRatio(2)
	rs, rc := m.RecordPodWrites(record.NewFakeRecorder(10), "replicaset"), m.RecordPodWrites(record.NewFakeRecorder(10), "replicationcontroller")
	for range 3 {
		rs.Event(&v1.Pod{}, v1.EventTypeNormal, podcontrol.SuccessfulCreatePodReason, "")
	}
	rc.Event(&v1.Pod{}, v1.EventTypeNormal, podcontrol.SuccessfulCreatePodReason, "")
	rs.Event(&v1.Pod{}, v1.EventTypeNormal, podcontrol.SuccessfulDeletePodReason, "")
	adds, retries := m.queue.NewAddsMetric("replicaset"), m.queue.NewRetriesMetric("replicaset")
	for range 5 {
		adds.Inc()
	}
	retries.Inc()
	assert.Equal(t, "4 syncs (1 requeued to wait for the cache, 1 failed), 4 pods created, 1 pods deleted, 5 queue adds, 1 retries, deletion-age ratio: 2 observed, mean 1.50", m.summary())
}
