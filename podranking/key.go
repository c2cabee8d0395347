package podranking

import (
	"math"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/podstate"
)

// Bit layout of sortKey.head. Rules 1 to 4 all prefer the smaller value, so
// packing them into one integer turns four comparisons into one on the hot
// path. Higher bits are the earlier rules.
const (
	headNilBit      = 1 << 40 // nil pods sort after every real pod
	headAssignedBit = 1 << 35 // rule 1: unassigned (0) first
	headPhaseShift  = 33      // rule 2: phase ordinal, 2 bits
	headReadyBit    = 1 << 32 // rule 3: not ready (0) first
	headCostMask    = 1<<32 - 1
	costBias        = 1 << 31 // rule 4: int32 cost shifted to an unsigned order
)

// stamp is an instant reduced to what the rules need. Wall seconds and
// nanoseconds are kept instead of time.Time so comparisons ignore monotonic
// readings and location pointers.
type stamp struct {
	sec    int64
	nsec   int32
	zero   bool
	bucket int16 // floor(log2(now - t)) in ns; -1 for t >= now; valid only when log scaling applies
}

// equal reports whether two stamps are the same instant. The zero flag takes
// part because the zero time and the Unix epoch would otherwise collide.
func (a stamp) equal(b stamp) bool { return a.zero == b.zero && a.sec == b.sec && a.nsec == b.nsec }

func (a stamp) after(b stamp) bool {
	return a.sec > b.sec || (a.sec == b.sec && a.nsec > b.nsec)
}

// sortKey is everything the rules read from one pod, extracted once.
type sortKey struct {
	pod     *v1.Pod
	uidHead uint64 // first 8 bytes of uid, big-endian and zero-padded: decides almost every UID comparison without touching the string's memory
	uid     types.UID
	rank    int
	head    uint64
	ready   stamp
	created stamp
	regular int32
	sidecar int32
	// r6 and r8 are the pod's instant classes for rules 6 and 8 (see
	// class.go). Until classes are assigned they describe a class of one:
	// the pod's own UID.
	r6, r8   classRef
	idx      int32 // input position: the final tie-break, which makes selection deterministic
	hasReady bool
	// restartsKnown marks regular and sidecar as filled. They are read
	// lazily because rule 7 is rarely reached (under log scaling two ready
	// pods with different ready times are always decided by rule 6) and the
	// container status arrays are the largest memory the key would touch.
	restartsKnown bool
}

// restarts returns the pod's restart counts, reading them on first use.
func (k *sortKey) restarts() (int32, int32) {
	if !k.restartsKnown {
		k.regular, k.sidecar = podstate.MaxContainerRestarts(k.pod)
		k.restartsKnown = true
	}
	return k.regular, k.sidecar
}

// policy is the subset of configuration key extraction and comparison need.
type policy struct {
	now      time.Time // zero disables log scaling, as upstream's zero Now does
	nowSec   int64     // now.Unix(), cached for ageOf
	nowNsec  int64     // now.Nanosecond()
	cost     bool
	logScale bool // effective: enabled and now non-zero
}

func newPolicy(now time.Time, disableCost, disableLog bool) policy {
	// Round(0) strips the monotonic reading: pod timestamps never carry one,
	// so comparing wall clocks throughout keeps every difference consistent.
	now = now.Round(0)
	return policy{now: now, nowSec: now.Unix(), nowNsec: int64(now.Nanosecond()), cost: !disableCost, logScale: !disableLog && !now.IsZero()}
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

func (p *policy) stampOf(t time.Time) stamp {
	if t.IsZero() {
		return stamp{zero: true, bucket: -1}
	}
	s := stamp{sec: t.Unix(), nsec: int32(t.Nanosecond()), bucket: -1}
	if p.logScale {
		s.bucket = logBucket(p.ageOf(t, s.sec, int64(s.nsec)))
	}
	return s
}

// maxFastAgeSec bounds the second difference ageOf computes directly: 2^33
// seconds in nanoseconds stays well inside int64, so no overflow check is
// needed below it.
const maxFastAgeSec = 1 << 33

// ageOf is now.Sub(t) for t with wall clock (sec, nsec). time.Time.Sub
// guards against overflow with an Add and an Equal, which cost more than the
// rest of key extraction; ages within about 270 years cannot overflow, so
// only the others take that path (and its saturation).
func (p *policy) ageOf(t time.Time, sec, nsec int64) time.Duration {
	ds := p.nowSec - sec
	if ds > -maxFastAgeSec && ds < maxFastAgeSec {
		return time.Duration(ds)*time.Second + time.Duration(p.nowNsec-nsec)
	}
	return p.now.Sub(t)
}

// logBucket is int64(math.Log2(float64(d))), the computation upstream
// performs. Near powers of two above 2^53 ns the float conversion and Log2's
// rounding can move a value into the next bucket; an exact integer log would
// disagree with upstream there. So the result is read from the float's
// exponent only where Log2 cannot round across an integer: when the
// mantissa's top 20 bits are neither all zeros nor all ones, log2 of the
// mantissa lies in [2^-21, 1-2^-21], millions of ulps away from 0 and 1, so
// Log2's floor is the exponent. The other one value in 2^19 calls math.Log2,
// which keeps the result identical to upstream's on every platform.
func logBucket(d time.Duration) int16 {
	if d <= 0 {
		return -1
	}
	x := float64(d)
	b := math.Float64bits(x)
	const (
		mantBits = 52
		edge     = 1 << (mantBits - 20)
		mantMask = 1<<mantBits - 1
	)
	if m := b & mantMask; m >= edge && m < mantMask+1-edge {
		return int16(int(b>>mantBits) - 1023)
	}
	return int16(int64(math.Log2(x)))
}

// makeKey fills k for pod at position i. A nil pod gets a key that sorts
// after every real pod.
func (p *policy) makeKey(k *sortKey, pod *v1.Pod, rank int, i int) {
	*k = sortKey{pod: pod, rank: rank, idx: int32(i)}
	if pod == nil {
		k.head = headNilBit
		k.ready = stamp{zero: true, bucket: -1}
		k.created = k.ready
		k.restartsKnown = true
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
	if c := firstReady(pod); c != nil && c.Status == v1.ConditionTrue {
		head |= headReadyBit
		k.hasReady = true
		k.ready = p.stampOf(c.LastTransitionTime.Time)
	} else {
		k.ready = stamp{zero: true, bucket: -1}
	}
	k.head = head
	k.uid = pod.UID
	k.uidHead = uidPrefix(pod.UID)
	k.r6 = classRef{uid: k.uid, head: k.uidHead}
	k.r8 = k.r6
	k.created = p.stampOf(pod.CreationTimestamp.Time)
}

// firstReady is podstate.ReadyCondition without its by-value PodStatus
// parameter, which would copy (and, because the result points into it, heap
// allocate) the status for every pod ranked.
func firstReady(pod *v1.Pod) *v1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == v1.PodReady {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// uidPrefix packs the first eight bytes of a UID so that, when two prefixes
// differ, comparing them as integers orders the UIDs as strings do (a zero pad
// byte sorts before every real byte except NUL, and equal prefixes fall back
// to the full string comparison).
func uidPrefix(uid types.UID) uint64 {
	var p uint64
	for i := 0; i < 8; i++ {
		p <<= 8
		if i < len(uid) {
			p |= uint64(uid[i])
		}
	}
	return p
}
