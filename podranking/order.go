package podranking

import (
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// cmpInt orders a before b (-1) when a < b.
func cmpInt[T ~int | ~int32 | ~int64 | ~uint64 | ~int16](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareBuiltin applies upstream's eight rules to two keys. It returns the
// deciding rule and -1 (a first), 1 (b first) or 0 (equivalent). On keys
// straight from makeKey, whose instant classes are the pods' own UIDs, it is
// upstream's Less in both directions on every pair (the sort.Interface path).
// On keys whose classes assignClasses filled (the selection path) it is the
// instant class order: equal to upstream on every input whose instants are
// distinct and on every pair whose instants are equal; see class.go.
func (p *policy) compareBuiltin(a, b *sortKey) (Rule, int) {
	if a.head != b.head {
		return headRule(a.head, b.head), cmpInt(a.head, b.head)
	}
	if a.head&headNilBit != 0 {
		return RuleNone, 0
	}
	if a.rank != b.rank {
		return RuleRank, -cmpInt(a.rank, b.rank)
	}
	// Equal heads mean equal readiness, so hasReady is true for both or neither.
	if a.hasReady {
		if c, decided := p.compareTimes(a.ready, b.ready, &a.r6, &b.r6); decided {
			return RuleReadyTime, c
		}
	}
	ra, sa := a.restarts()
	rb, sb := b.restarts()
	if ra != rb {
		return RuleRestarts, -cmpInt(ra, rb)
	}
	if sa != sb {
		return RuleRestarts, -cmpInt(sa, sb)
	}
	if c, decided := p.compareTimes(a.created, b.created, &a.r8, &b.r8); decided {
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

// compareTimes is rules 6 and 8. decided=false means "fall through to the
// next rule". Equal instants fall through, as upstream; otherwise a zero time
// goes first, then the younger time. Under log scaling, times in the same
// power-of-two bucket of age compare by instant class (class.go):
// representative UID, then multi, then instant. For one-pod classes (the
// pairwise sort.Interface path) that is upstream's comparison of the pods'
// own UIDs, and equal UIDs are equivalent (decided, 0) as upstream finds them.
func (p *policy) compareTimes(ta, tb stamp, ca, cb *classRef) (int, bool) {
	// Checked first, as upstream does. For grouped keys this changes nothing:
	// same-instant pods that meet here share a class, hence the whole key.
	if ta.equal(tb) {
		return 0, false
	}
	if ta.zero || tb.zero {
		if ta.zero {
			return -1, true
		}
		return 1, true
	}
	if p.logScale {
		if ta.bucket != tb.bucket {
			return cmpInt(ta.bucket, tb.bucket), true
		}
		if c := cmpClass(ca, cb); c != 0 {
			return c, true
		}
		if ca.multi != cb.multi {
			// Only reachable with duplicate UIDs: a one-pod class first.
			if cb.multi {
				return -1, true
			}
			return 1, true
		}
		if !ca.multi {
			return 0, true
		}
	}
	if ta.after(tb) {
		return -1, true
	}
	return 1, true
}

func cmpUID(a, b *sortKey) int { return cmpUIDWithHead(a.uidHead, b.uidHead, a.uid, b.uid) }

// cmpUIDWithHead orders UIDs as strings, deciding most pairs on their packed
// 8-byte prefixes (uidPrefix) before touching the strings themselves.
func cmpUIDWithHead(aHead, bHead uint64, a, b types.UID) int {
	if aHead != bHead {
		return cmpInt(aHead, bHead)
	}
	return strings.Compare(string(a), string(b))
}
