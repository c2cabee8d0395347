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
	// Templates rarely carry more than a handful of labels; the buffer keeps
	// the flattened copy on the stack for them.
	var buf [8]labelPair
	c := ReplicaCounter{want: appendLabelPairs(buf[:0], templateLabels), minReadySeconds: minReadySeconds, now: now}
	for _, pod := range activePods {
		c.Add(pod)
	}
	return c.Counts()
}

// ReplicaCounter is CountReplicas one pod at a time, for a caller that
// already visits each pod (to claim it, say) and would otherwise read every
// pod a second time just to count it. Its zero value is not usable; make one
// with NewReplicaCounter.
type ReplicaCounter struct {
	want            labelMatcher
	minReadySeconds int32
	now             time.Time
	counts          ReplicaCounts
}

// NewReplicaCounter returns a counter with CountReplicas' arguments, less the
// pods.
func NewReplicaCounter(templateLabels map[string]string, minReadySeconds int32, now time.Time) ReplicaCounter {
	// Flattened once here rather than ranging over the map for every pod:
	// map iteration is the expensive part of the check (it seeds a random
	// start each time), and a sync counts every pod of the workload.
	return ReplicaCounter{
		want:            appendLabelPairs(make(labelMatcher, 0, len(templateLabels)), templateLabels),
		minReadySeconds: minReadySeconds, now: now,
	}
}

// Add counts one active pod; a nil pod is skipped, as CountReplicas skips it.
func (c *ReplicaCounter) Add(pod *v1.Pod) {
	if pod == nil {
		return
	}
	c.AddClass(c.Classify(pod))
}

// PodClass is how a ReplicaCounter counts one active pod. A caller that
// sees the same unchanged pod object sync after sync can keep its class and
// count it with AddClass instead of reading the pod again; the class
// depends only on the pod and, when minReadySeconds is positive, on the
// counter's time.
type PodClass uint8

// The bits of a PodClass.
const (
	FullyLabeled PodClass = 1 << iota // the pod has every template label
	Ready                             // the pod is ready
	Available                         // the pod is available (and so ready)
)

// Classify says how Add would count pod, which must not be nil.
func (c *ReplicaCounter) Classify(pod *v1.Pod) PodClass {
	var class PodClass
	if c.want.matches(pod.Labels) {
		class |= FullyLabeled
	}
	// Available implies ready, so in the common steady state (every pod
	// available) the conditions are scanned once instead of twice.
	if podstate.IsAvailable(pod, c.minReadySeconds, c.now) {
		class |= Ready | Available
	} else if podstate.IsReady(pod) {
		class |= Ready
	}
	return class
}

// StableClasses reports whether Classify always gives an unchanged pod the
// same class: when minReadySeconds is not positive, where availability is
// readiness, whatever the time.
func (c *ReplicaCounter) StableClasses() bool { return c.minReadySeconds <= 0 }

// AddClass counts one active pod of the given class.
func (c *ReplicaCounter) AddClass(class PodClass) {
	c.counts.Replicas++
	if class&FullyLabeled != 0 {
		c.counts.FullyLabeledReplicas++
	}
	if class&Ready != 0 {
		c.counts.ReadyReplicas++
	}
	if class&Available != 0 {
		c.counts.AvailableReplicas++
	}
}

// Counts returns the counts of the pods added so far.
func (c *ReplicaCounter) Counts() ReplicaCounts { return c.counts }

// labelMatcher is an equality selector flattened to a slice, so matching it
// against many label sets iterates the slice rather than the map.
type labelMatcher []labelPair

type labelPair struct{ key, value string }

// appendLabelPairs appends the pairs of want to dst, in no particular order.
func appendLabelPairs(dst labelMatcher, want map[string]string) labelMatcher {
	for k, v := range want {
		dst = append(dst, labelPair{k, v})
	}
	return dst
}

// matches reports whether have includes every wanted key with the same
// value, which is what matching an equality selector means (a wanted empty
// value still needs the key present).
func (m labelMatcher) matches(have map[string]string) bool {
	if len(m) > len(have) {
		return false
	}
	for _, p := range m {
		if got, ok := have[p.key]; !ok || got != p.value {
			return false
		}
	}
	return true
}

// hasLabels is the one-off form of labelMatcher.matches.
func hasLabels(have, want map[string]string) bool {
	var buf [8]labelPair
	return appendLabelPairs(buf[:0], want).matches(have)
}
