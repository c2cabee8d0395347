package main

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// TestPodWriteCounter: only successful creates and deletes count, per
// controller, and every event still reaches the real recorder.
func TestPodWriteCounter(t *testing.T) {
	m, err := newControllerMetrics()
	require.NoError(t, err)
	fake := record.NewFakeRecorder(10)
	r := podWriteCounter{next: fake, metrics: m, ctrlName: kindReplicationController}
	owner := &v1.ReplicationController{}

	r.Eventf(owner, v1.EventTypeNormal, podcontrol.SuccessfulCreatePodReason, "Created pod: %v", "a")
	r.Event(owner, v1.EventTypeNormal, podcontrol.SuccessfulCreatePodReason, "Created pod: b")
	r.AnnotatedEventf(owner, nil, v1.EventTypeNormal, podcontrol.SuccessfulDeletePodReason, "Deleted pod: %v", "a")
	r.Eventf(owner, v1.EventTypeWarning, podcontrol.FailedCreatePodReason, "Error creating: %v", "quota")
	r.Eventf(owner, v1.EventTypeWarning, podcontrol.FailedDeletePodReason, "Error deleting: %v", "boom")
	r.Eventf(owner, v1.EventTypeWarning, "SelectorInvalid", "Invalid selector")

	assert.Equal(t, 2.0, testutil.ToFloat64(m.podsCreated.WithLabelValues(kindReplicationController)))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.podsDeleted.WithLabelValues(kindReplicationController)))
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

func TestEventSourceComponent(t *testing.T) {
	assert.Equal(t, "replicaset-controller", kinds[kindReplicaSet].events)
	assert.Equal(t, "replication-controller", kinds[kindReplicationController].events)
}
