package podranking

import (
	"math"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/podstate"
)

// Bit layout of key.head. Rules 1 to 4 all prefer the smaller value, so
// packing them into one integer turns four comparisons into one. Higher bits
// are the earlier rules.
const (
	headNilBit      = 1 << 40 // nil pods sort after every real pod
	headAssignedBit = 1 << 35 // rule 1: unassigned (0) first
	headPhaseShift  = 33      // rule 2: phase ordinal, 2 bits
	headReadyBit    = 1 << 32 // rule 3: not ready (0) first
	headCostMask    = 1<<32 - 1
	costBias        = 1 << 31 // rule 4: int32 cost shifted to an unsigned order
)

// key is everything the rules read from one pod, extracted once per ranking,
// so that a comparison touches neither annotations nor conditions.
type key struct {
	pod     *v1.Pod
	uid     types.UID
	head    uint64
	rank    int
	ready   time.Time // the Ready condition's transition time; zero when not ready
	created time.Time
	// readyBucket and createdBucket are floor(log2(age in ns)), -1 for ages
	// <= 0; set only under log scaling and for non-zero times.
	readyBucket, createdBucket int64
	regular, sidecar           int32 // rule 7
	idx                        int32 // position in the ranked slice
}

// policy is what key extraction and comparison need from the configuration.
type policy struct {
	now      time.Time
	cost     bool
	logScale bool // enabled and now non-zero, as upstream's zero Now disables it
	// consistentTies selects the instant class order (WithConsistentTies),
	// whose classes group wall-clock instants, so its times drop monotonic
	// readings; classes holds each pod's classes, filled after extraction.
	consistentTies bool
	classes        []instantClasses
}

func newPolicy(now time.Time, disableCost, disableLog, consistentTies bool) policy {
	if consistentTies {
		now = now.Round(0)
	}
	return policy{now: now, cost: !disableCost, logScale: !disableLog && !now.IsZero(), consistentTies: consistentTies}
}

func phaseOrdinal(p v1.PodPhase) uint64 {
	switch p {
	case v1.PodUnknown:
		return 1
	case v1.PodRunning:
		return 2
	default: // Pending and every other phase read as 0, as in upstream's map lookup
		return 0
	}
}

// bucket is upstream's logarithmic rank of t: int64(math.Log2) of its age in
// nanoseconds, or -1 when t is not in the past.
func (p *policy) bucket(t time.Time) int64 {
	d := p.now.Sub(t)
	if d <= 0 {
		return -1
	}
	return int64(math.Log2(float64(d)))
}

// makeKey fills k for pod at position i. A nil pod gets a key that sorts
// after every real pod.
func (p *policy) makeKey(k *key, pod *v1.Pod, rank int, i int) {
	*k = key{pod: pod, rank: rank, idx: int32(i)}
	if pod == nil {
		k.head = headNilBit
		return
	}
	var head uint64
	if pod.Spec.NodeName != "" {
		head |= headAssignedBit
	}
	head |= phaseOrdinal(pod.Status.Phase) << headPhaseShift
	var cost int32
	if p.cost {
		if v, ok := pod.Annotations[DeletionCostAnnotation]; ok {
			cost, _ = parseCost(v)
		}
	}
	head |= uint64(int64(cost)+costBias) & headCostMask
	if c := readyCondition(pod); c != nil && c.Status == v1.ConditionTrue {
		head |= headReadyBit
		k.ready = c.LastTransitionTime.Time
	}
	k.head = head
	k.uid = pod.UID
	k.created = pod.CreationTimestamp.Time
	if p.consistentTies {
		k.ready, k.created = k.ready.Round(0), k.created.Round(0)
	}
	k.regular, k.sidecar = podstate.MaxContainerRestarts(pod)
	if p.logScale {
		if !k.ready.IsZero() {
			k.readyBucket = p.bucket(k.ready)
		}
		if !k.created.IsZero() {
			k.createdBucket = p.bucket(k.created)
		}
	}
}

// readyCondition is the pod's first Ready condition, read in place:
// podstate.ReadyCondition takes the status by value, which would copy it.
func readyCondition(pod *v1.Pod) *v1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == v1.PodReady {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}
