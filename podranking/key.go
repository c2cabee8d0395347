package podranking

import (
	"encoding/binary"
	"math"
	"math/bits"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/podstate"
)

// Bit layout of key.head. Rules 1 to 4 all prefer the smaller value, so
// packing them into one integer turns four comparisons into one. Higher bits
// are the earlier rules.
const (
	headNilBit      = 1 << 36 // nil pods sort after every real pod
	headAssignedBit = 1 << 35 // rule 1: unassigned (0) first
	headPhaseShift  = 33      // rule 2: phase ordinal, 2 bits
	headReadyBit    = 1 << 32 // rule 3: not ready (0) first
	headCostMask    = 1<<32 - 1
	costBias        = 1 << 31 // rule 4: int32 cost shifted to an unsigned order
	headBits        = 37
)

// key is everything the rules read from one pod, extracted once per ranking,
// so that a comparison touches neither annotations nor conditions. Keys are
// sorted in place, so they are kept small and hold times as wall-clock
// instants.
type key struct {
	pod *v1.Pod
	// uidPrefix is the UID's first eight bytes, big-endian, so that
	// comparing prefixes as integers orders UIDs as strings do, up to ties.
	// It is read from the pod only when a comparison gets that far (see
	// uid): the UID's bytes are a memory read of their own, and most pods
	// of a large ranking are never compared by UID. uidKnown says whether
	// it has been read.
	uidPrefix uint64
	head      uint64
	rank      int
	ready     instant // the Ready condition's transition time; zero when not ready
	// created is the creation time, with createdBucket, read from the pod
	// only when a comparison gets to rule 8 (see policy.createdOf): it is
	// the last rule, and the creation time sits in a cache line of the pod
	// that nothing else reads. createdKnown says whether it has been read.
	created instant
	// readyBucket and createdBucket are floor(log2(age in ns)), -1 for ages
	// <= 0; set only under log scaling and for non-zero times.
	readyBucket, createdBucket int16
	// regular and sidecar are rule 7's restart counts, read from the pod
	// only when a comparison gets that far (see restarts): the container
	// statuses are a memory read of their own, and most comparisons are
	// decided by an earlier rule. regular is unknownRestarts until read.
	regular, sidecar int32
	idx              int32 // position in the ranked slice
	uidKnown         bool
	createdKnown     bool
}

// unknownRestarts marks restart counts not read yet; real counts are never
// negative (podstate.MaxContainerRestarts reads negative counts as zero).
const unknownRestarts = -1

// restarts returns rule 7's restart counts of the key's pod, reading them on
// first use. A Ranking calls it only while it owns its keys: while it
// extracts them, or holding its mutex.
func (k *key) restarts() (regular, sidecar int32) {
	if k.regular == unknownRestarts {
		k.regular, k.sidecar = podstate.MaxContainerRestarts(k.pod)
	}
	return k.regular, k.sidecar
}

// createdOf returns the creation instant and bucket of k, reading them from
// the pod on first use, under the same ownership as restarts. Reading a
// time with a monotonic clock reading sets p.monotonic, which may happen in
// the middle of a sort: the comparisons made before it compared times
// without monotonic readings, for which the instants and the time.Time
// values give the same answers, so no earlier decision changes meaning.
func (p *policy) createdOf(k *key) (instant, int16) {
	if !k.createdKnown {
		k.created, k.createdBucket = p.instant(k.pod.CreationTimestamp.Time)
		k.createdKnown = true
	}
	return k.created, k.createdBucket
}

// uid returns the key's uidPrefix, reading it from the pod on first use,
// under the same ownership as restarts.
func (k *key) uid() uint64 {
	if !k.uidKnown {
		k.uidPrefix, k.uidKnown = uidPrefix(k.pod.UID), true
	}
	return k.uidPrefix
}

// instant is a time's wall clock. Equal and After on two times without
// monotonic clock readings compare exactly these fields.
type instant struct {
	sec  int64
	nsec int32
}

var zeroInstant = instantOf(time.Time{})

func instantOf(t time.Time) instant { return instant{t.Unix(), int32(t.Nanosecond())} }

func (a instant) isZero() bool { return a == zeroInstant }

func (a instant) after(b instant) bool {
	return a.sec > b.sec || (a.sec == b.sec && a.nsec > b.nsec)
}

// hasMonotonic reports whether t carries a monotonic clock reading, which
// time.Time's Equal and After prefer when both times have one. Pods from
// the API server never do; pods built in-process with time.Now can.
func hasMonotonic(t time.Time) bool { return t != t.Round(0) }

// policy is what key extraction and comparison need from the configuration.
type policy struct {
	now      time.Time
	nowWall  instant // now's wall clock
	cost     bool
	logScale bool // enabled and now non-zero, as upstream's zero Now disables it
	// monotonic is set when some pod time carries a monotonic reading; the
	// time rules then compare the pods' time.Time values, as upstream does.
	monotonic bool
	// consistentTies selects the instant class order (WithConsistentTies);
	// classes holds each pod's classes, filled after extraction.
	consistentTies bool
	classes        []instantClasses
}

func newPolicy(now time.Time, disableCost, disableLog, consistentTies bool) policy {
	if consistentTies {
		// The class order groups wall-clock instants.
		now = now.Round(0)
	}
	return policy{now: now, nowWall: instantOf(now), cost: !disableCost, logScale: !disableLog && !now.IsZero(), consistentTies: consistentTies}
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
func (p *policy) bucket(t time.Time) int16 {
	d := p.now.Sub(t)
	if d <= 0 {
		return -1
	}
	return log2Floor(d)
}

// log2Floor is int64(math.Log2(float64(d))) for d > 0, without the
// logarithm wherever the answer is certain. With b the position of d's
// highest bit, a d more than 2^(b-20) away from both 2^b and 2^(b+1) has a
// log2 more than 6e-7 away from any integer, far more than math.Log2's
// error of a few units in the last place, so its integer part is b. Nearer
// a power of two the rounding of float64(d) and of the logarithm can land
// on either side of the integer, and math.Log2 itself decides, as in
// upstream.
func log2Floor(d time.Duration) int16 {
	u := uint64(d)
	b := bits.Len64(u) - 1
	if b > 20 {
		above, margin := u-1<<b, uint64(1)<<(b-20)
		if above > margin && above < 1<<b-margin {
			return int16(b)
		}
	}
	return int16(math.Log2(float64(d)))
}

// uidPrefix packs the first eight bytes of uid, zero-padded, big-endian.
func uidPrefix(uid types.UID) uint64 {
	var b [8]byte
	copy(b[:], uid)
	return binary.BigEndian.Uint64(b[:])
}

// makeKey fills k for pod at position i. A nil pod gets a key that sorts
// after every real pod and is equivalent to every other nil pod's.
//
// It reads the pod straight into the key: going through a podFacts, as a
// Memo does, costs a tenth more on a ranking whose pods are in the cache.
// TestKeyFromFactsIsMakeKey holds the two ways to the same key.
func (p *policy) makeKey(k *key, pod *v1.Pod, rank int, i int) {
	if pod == nil {
		p.nilKey(k, i)
		return
	}
	*k = key{pod: pod, rank: rank, idx: int32(i), ready: zeroInstant, created: zeroInstant}
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
	k.head = head
	k.regular = unknownRestarts
	if c := readyCondition(pod); c != nil && c.Status == v1.ConditionTrue {
		k.head |= headReadyBit
		k.ready, k.readyBucket = p.instant(c.LastTransitionTime.Time)
	}
}

// nilKey fills k for a nil pod at position i.
func (p *policy) nilKey(k *key, i int) {
	// Rank 0 too: the sort's inlined Less compares ranks before it looks
	// for nil pods.
	*k = key{head: headNilBit, idx: int32(i), ready: zeroInstant, created: zeroInstant, createdKnown: true}
}

// podFacts is what a ranking reads from one pod, before any policy applies
// to it; a Memo keeps them per pod object, and keyFromFacts makes from them
// the key makeKey makes from the pod.
type podFacts struct {
	uidPrefix uint64
	phase     uint64 // phaseOrdinal
	readyAt   time.Time
	created   time.Time
	cost      int32 // the parsed deletion cost; 0 when absent or unreadable
	node      int32 // the node's id in a Memo
	assigned  bool
	ready     bool
	active    bool // podstate.IsActive; set by a Memo only
}

// read fills f from pod, the deletion cost only when withCost.
func (f *podFacts) read(pod *v1.Pod, withCost bool) {
	f.assigned = pod.Spec.NodeName != ""
	f.phase = phaseOrdinal(pod.Status.Phase)
	if withCost {
		if v, ok := pod.Annotations[DeletionCostAnnotation]; ok {
			f.cost, _ = parseCost(v)
		}
	}
	f.uidPrefix = uidPrefix(pod.UID)
	if c := readyCondition(pod); c != nil && c.Status == v1.ConditionTrue {
		f.ready, f.readyAt = true, c.LastTransitionTime.Time
	}
	f.created = pod.CreationTimestamp.Time
}

// keyFromFacts fills k for pod, at position i, from its facts.
func (p *policy) keyFromFacts(k *key, pod *v1.Pod, f *podFacts, rank int, i int) {
	*k = key{pod: pod, rank: rank, idx: int32(i), ready: zeroInstant, created: zeroInstant}
	var head uint64
	if f.assigned {
		head |= headAssignedBit
	}
	head |= f.phase << headPhaseShift
	var cost int32
	if p.cost {
		cost = f.cost
	}
	head |= uint64(int64(cost)+costBias) & headCostMask
	k.head = head
	k.uidPrefix, k.uidKnown = f.uidPrefix, true
	k.regular = unknownRestarts
	if f.ready {
		k.head |= headReadyBit
		k.ready, k.readyBucket = p.instant(f.readyAt)
	}
	k.created, k.createdBucket = p.instant(f.created)
	k.createdKnown = true
}

// instant reduces a pod time to its wall clock and its log2 bucket.
func (p *policy) instant(t time.Time) (instant, int16) {
	if t.IsZero() {
		return zeroInstant, 0
	}
	mono := hasMonotonic(t)
	if mono {
		if p.consistentTies {
			t, mono = t.Round(0), false
		} else {
			p.monotonic = true
		}
	}
	in := instantOf(t)
	var b int16
	if p.logScale {
		b = p.bucketOf(t, in, mono)
	}
	return in, b
}

// bucketOf is bucket(t) for t, whose wall clock is in. Without a monotonic
// reading on t, now.Sub(t) is the difference of the wall clocks whenever it
// cannot overflow, so the age is computed from the seconds and nanoseconds
// at hand rather than by Sub, which checks for overflow with an Add.
func (p *policy) bucketOf(t time.Time, in instant, mono bool) int16 {
	if ds := p.nowWall.sec - in.sec; !mono && ds > -1<<32 && ds < 1<<32 {
		d := time.Duration(ds)*time.Second + time.Duration(p.nowWall.nsec-in.nsec)
		if d <= 0 {
			return -1
		}
		return log2Floor(d)
	}
	return p.bucket(t)
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
