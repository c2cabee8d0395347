package status

import (
	"time"

	"github.com/ctrlkit/ctrlkit/podstate"
	v1 "k8s.io/api/core/v1"
)

// ReplicaCounts is what a workload controller reports about its active pods;
// the field names match the ReplicaSet and ReplicationController status
// fields they fill.
type ReplicaCounts struct {
	// Replicas is the number of active pods.
	Replicas int32
	// FullyLabeledReplicas counts pods whose labels include every label of
	// the pod template, with the same values. A selector usually matches on a
	// subset of the template labels; this tells how many pods carry them all.
	FullyLabeledReplicas int32
	// ReadyReplicas counts pods with a Ready condition that is True.
	ReadyReplicas int32
	// AvailableReplicas counts ready pods that have been ready for at least
	// minReadySeconds.
	AvailableReplicas int32
}

// CountReplicas counts activePods for any workload controller: all of them,
// those carrying every template label, the ready ones, and the ready ones that
// are available at now. One now serves every pod, so a status computed once
// is consistent with itself however long the loop takes.
//
// activePods is taken as given (filter it with podstate.FilterActive). Nil
// entries are skipped and not counted, where upstream would panic. An empty
// or nil templateLabels makes every pod fully labelled, as an empty equality
// selector matches everything.
func CountReplicas(activePods []*v1.Pod, templateLabels map[string]string, minReadySeconds int32, now time.Time) ReplicaCounts {
	var c ReplicaCounts
	for _, pod := range activePods {
		if pod == nil {
			continue
		}
		c.Replicas++
		if hasLabels(pod.Labels, templateLabels) {
			c.FullyLabeledReplicas++
		}
		if !podstate.IsReady(pod) {
			continue
		}
		c.ReadyReplicas++
		if podstate.IsAvailable(pod, minReadySeconds, now) {
			c.AvailableReplicas++
		}
	}
	return c
}

// hasLabels reports whether have includes every key of want with the same
// value, which is what matching want as an equality selector means (a wanted
// empty value still needs the key present). It avoids building a selector per
// call.
func hasLabels(have, want map[string]string) bool {
	if len(want) > len(have) {
		return false
	}
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}
