package podranking

import (
	"cmp"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

// compare applies the eight built-in rules to two keys. It returns the
// deciding rule and -1 (a first), 1 (b first) or 0 (equivalent). Without
// instant classes it is upstream's Less in both directions: Less(a, b) is
// compare(a, b) < 0, on every pair, including the pairs where upstream's
// relation is not transitive.
func (p *policy) compare(a, b *key) (Rule, int) {
	if a.head != b.head {
		return headRule(a.head, b.head), cmp.Compare(a.head, b.head)
	}
	if a.head&headNilBit != 0 {
		return RuleNone, 0
	}
	if a.rank != b.rank {
		return RuleRank, cmp.Compare(b.rank, a.rank)
	}
	return p.compareTimesAndRestarts(a, b)
}

// compareTimesAndRestarts is rules 6 to 8, for keys equal in rules 1 to 5.
func (p *policy) compareTimesAndRestarts(a, b *key) (Rule, int) {
	// Equal heads mean equal readiness: rule 6 applies to both or neither.
	if a.head&headReadyBit != 0 {
		if c, decided := p.compareTimes(classReady, a, b); decided {
			return RuleReadyTime, c
		}
	}
	regularA, sidecarA := a.restarts()
	regularB, sidecarB := b.restarts()
	if regularA != regularB {
		return RuleRestarts, cmp.Compare(regularB, regularA)
	}
	if sidecarA != sidecarB {
		return RuleRestarts, cmp.Compare(sidecarB, sidecarA)
	}
	if c, decided := p.compareTimes(classCreated, a, b); decided {
		return RuleCreationTime, c
	}
	return RuleNone, 0
}

// headRule names the highest packed field in which two different heads differ.
func headRule(a, b uint64) Rule {
	d := a ^ b
	switch {
	case d&headNilBit != 0:
		return RuleNil
	case d&headAssignedBit != 0:
		return RuleAssignment
	case d&(3<<headPhaseShift) != 0:
		return RulePhase
	case d&headReadyBit != 0:
		return RuleReadiness
	default:
		return RuleDeletionCost
	}
}

// compareTimes is rules 6 and 8; decided=false falls through to the next
// rule. As upstream: equal instants fall through; a zero time, or any time
// without log scaling, goes first if it is zero, else if it is the more
// recent; otherwise the younger log2 bucket goes first, and within a bucket
// the smaller UID (equal UIDs are equivalent, not a fall-through). Under
// WithConsistentTies the UIDs are those of the pods' instant classes.
func (p *policy) compareTimes(rule int, a, b *key) (int, bool) {
	ta, tb, ba, bb := a.ready, b.ready, a.readyBucket, b.readyBucket
	if rule == classCreated {
		// Before p.monotonic is read: reading a time can set it.
		ta, ba = p.createdOf(a)
		tb, bb = p.createdOf(b)
	}
	if p.monotonic {
		return p.compareTimesMonotonic(rule, a, b, ba, bb)
	}
	if ta == tb {
		return 0, false
	}
	if !p.logScale || ta.isZero() || tb.isZero() {
		return afterOrZero(ta.isZero(), tb.isZero(), ta.after(tb)), true
	}
	if ba != bb {
		return cmp.Compare(ba, bb), true
	}
	if p.classes != nil {
		return p.compareClasses(rule, a, b), true
	}
	return compareUIDs(a, b), true
}

// compareTimesMonotonic is compareTimes on the pods' own time.Time values,
// whose Equal and After read monotonic clock readings when both times carry
// one, as upstream's do. The buckets were computed from the same values.
func (p *policy) compareTimesMonotonic(rule int, a, b *key, ba, bb int16) (int, bool) {
	ta, tb := readyTime(a.pod), readyTime(b.pod)
	if rule == classCreated {
		ta, tb = a.pod.CreationTimestamp.Time, b.pod.CreationTimestamp.Time
	}
	if ta.Equal(tb) {
		return 0, false
	}
	if !p.logScale || ta.IsZero() || tb.IsZero() {
		return afterOrZero(ta.IsZero(), tb.IsZero(), ta.After(tb)), true
	}
	if ba != bb {
		return cmp.Compare(ba, bb), true
	}
	return compareUIDs(a, b), true
}

// readyTime is the transition time of a ready pod's Ready condition.
func readyTime(pod *v1.Pod) time.Time {
	if c := readyCondition(pod); c != nil && c.Status == v1.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

// afterOrZero orders two unequal times, given whether each is zero and
// whether a is after b: a zero time first, else the later.
func afterOrZero(aZero, bZero, aAfter bool) int {
	switch {
	case aZero:
		return -1
	case bZero:
		return 1
	case aAfter:
		return -1
	}
	return 1
}

// compareUIDs orders two pods' UIDs as strings. Real UIDs differ in their
// first eight bytes, so the prefixes almost always decide.
func compareUIDs(a, b *key) int {
	if ua, ub := a.uid(), b.uid(); ua != ub {
		return cmp.Compare(ua, ub)
	}
	return strings.Compare(string(a.pod.UID), string(b.pod.UID))
}
